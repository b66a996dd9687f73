import { KeyHasher } from '@bloomkit/core/store'
import xxhash from 'xxhash-wasm'
import { medianOpsPerSecond, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'

const KEYS = 10_000
const LENGTHS = [8, 16, 32, 64, 128, 256, 1024]
const QUICK_LENGTHS = [16, 64, 256]

function asciiKeys(length: number): string[] {
  return Array.from({ length: KEYS }, (_, i) => `${i}:`.padEnd(length, 'abcdefghijklmnopqrstuvwxyz').slice(0, length))
}

/**
 * Cost per key of each hashing path (both 32-bit lanes), by key length: the pure-JS XXH32 pass
 * over char codes or bytes, and two xxhash-wasm calls. Decides core's WASM_MIN_STRING_LENGTH and WASM_MIN_BYTE_LENGTH.
 */
export async function runHashingBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  const lengths = quick ? QUICK_LENGTHS : LENGTHS
  const time = quick ? { time: 150, iterations: 3 } : {}
  // Called directly: on Node < 22 core keeps xxhash-wasm off its hot path (see wasmHashingSafe).
  const wasm = await xxhash()
  const pureJs = new KeyHasher(0)
  const encoder = new TextEncoder()
  for (const [step, length] of lengths.entries()) {
    report.progress(step, lengths.length, `${length}-char keys`)
    const strings = asciiKeys(length)
    const bytes = strings.map((s) => encoder.encode(s))
    const js = await medianOpsPerSecond(`pure-JS string ${length}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < KEYS; i++) {
        pureJs.hash(strings[i])
        x ^= pureJs.a ^ pureJs.b
      }
      return x
    }, time)
    const viaWasm = await medianOpsPerSecond(`xxhash-wasm string ${length}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < KEYS; i++) x ^= wasm.h32(strings[i], 0) ^ wasm.h32(strings[i], 0x9e3779b9)
      return x
    }, time)
    const jsBytes = await medianOpsPerSecond(`pure-JS bytes ${length}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < KEYS; i++) {
        pureJs.hash(bytes[i])
        x ^= pureJs.a ^ pureJs.b
      }
      return x
    }, time)
    const wasmBytes = await medianOpsPerSecond(`xxhash-wasm bytes ${length}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < KEYS; i++) x ^= wasm.h32Raw(bytes[i], 0) ^ wasm.h32Raw(bytes[i], 0x9e3779b9)
      return x
    }, time)
    const ns = (ops: number) => `${(1e9 / ops).toFixed(0)} ns`
    report.add({
      suite: 'hashing',
      task: `${length}-char key, both lanes`,
      subject: 'pure JS / xxhash-wasm',
      batch: 1,
      opsPerSecond: js,
      notes: `string: JS ${ns(js)} vs wasm ${ns(viaWasm)}; Uint8Array: JS ${ns(jsBytes)} vs wasm ${ns(wasmBytes)}`,
    })
  }
}
