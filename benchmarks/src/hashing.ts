import { compileWasmXxh32, WASM_MIN_STRING_LENGTH } from '@bloomkit/core/spec'
import { KeyHasher } from '@bloomkit/core/store'
import xxhash from 'xxhash-wasm'
import { KeyHasherBefore } from './hashing-before.js'
import { median, medianOpsPerSecond, xorshift32, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'

const KEYS = 10_000
const LENGTHS = [8, 16, 32, 64, 128, 256, 1024]
const QUICK_LENGTHS = [16, 32, 64, 256]
/** Paired rounds (today's hasher, then the one before issue 25, alternating which goes first). */
const ROUNDS = 31
const QUICK_ROUNDS = 9
/** The issue's target: 16- to 64-char string keys at least this much faster than before it. */
const TARGET_SPEEDUP = 2
const TARGET_LENGTHS = [16, 32, 64]

function asciiKeys(length: number): string[] {
  return Array.from({ length: KEYS }, (_, i) => `${i}:`.padEnd(length, 'abcdefghijklmnopqrstuvwxyz').slice(0, length))
}

/** The keys people store: `user:<n>`, version-4-shaped UUIDs, 60-char URLs (fixed seeds, so every run hashes the same keys). */
function realKeys(): Array<{ name: string; keys: string[] }> {
  const next = xorshift32(25)
  const hex = (n: number, digits: number) => n.toString(16).padStart(8, '0').slice(8 - digits)
  const uuids = Array.from({ length: KEYS }, () =>
    `${hex(next(), 8)}-${hex(next(), 4)}-4${hex(next(), 3)}-${hex((next() & 0x3fff) | 0x8000, 4)}-${hex(next(), 4)}${hex(next(), 8)}`)
  const urls = Array.from({ length: KEYS }, (_, i) =>
    `https://shop.example.com/products/${i % 97}/item-${next() % 1_000_000}?ref=news`.padEnd(60, '&x=1').slice(0, 60))
  return [
    { name: '`user:<n>` (10–14 chars)', keys: Array.from({ length: KEYS }, (_, i) => `user:${(next() % 100_000_000) + i}`) },
    { name: 'UUID (36 chars)', keys: uuids },
    { name: 'URL (60 chars)', keys: urls },
  ]
}

/**
 * Cost per key of each hashing path (both 32-bit lanes): today's KeyHasher (what every add and has
 * runs) against the pure-JS pass before issue 25 in paired rounds, with core's WebAssembly XXH32
 * (a KeyHasher given it, as where wasmHashingSafe() holds), xxhash-wasm and Uint8Array keys beside them. Decides core's ENCODE_MIN_STRING_LENGTH, WASM_MIN_STRING_LENGTH and WASM_MIN_BYTE_LENGTH.
 */
export async function runHashingBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  const lengths = quick ? QUICK_LENGTHS : LENGTHS
  const rounds = quick ? QUICK_ROUNDS : ROUNDS
  const time = quick ? { time: 150, iterations: 3 } : {}
  // Called directly: on Node < 22 core keeps xxhash-wasm off its hot path (see wasmHashingSafe).
  const wasm = await xxhash()
  const hasher = new KeyHasher(0)
  const withWasm = new KeyHasher(0, await compileWasmXxh32())
  const { seedA, seedB } = hasher
  const before = new KeyHasherBefore(seedA, seedB)
  const encoder = new TextEncoder()
  const sets = [...lengths.map((length) => ({ name: `${length}-char key`, length, keys: asciiKeys(length) })), ...realKeys().map((set) => ({ ...set, length: 0 }))]
  const speedups = new Map<string, number>()
  // Strings first, every set, so that V8's feedback on the hash function is about strings while they
  // are timed (the Uint8Array rows come after, as their own pass).
  for (const [step, set] of sets.entries()) {
    report.progress(step, sets.length * 2, `${set.name}: strings`)
    const { keys } = set
    const now = () => {
      let x = 0
      for (let i = 0; i < keys.length; i++) {
        hasher.hash(keys[i])
        x ^= hasher.pair[0] ^ hasher.pair[1]
      }
      return x
    }
    const old = () => {
      let x = 0
      for (let i = 0; i < keys.length; i++) {
        before.hash(keys[i])
        x ^= before.pair[0] ^ before.pair[1]
      }
      return x
    }
    const samples = { now: [] as number[], old: [] as number[] }
    for (let round = 0; round < rounds; round++) {
      for (const which of round % 2 === 0 ? (['now', 'old'] as const) : (['old', 'now'] as const)) {
        samples[which].push(await medianOpsPerSecond(`${which} ${set.name}`, keys.length, which === 'now' ? now : old, { time: 0, iterations: 3, warmup: round === 0 }))
      }
    }
    const ratios = samples.now.map((ops, round) => ops / samples.old[round])
    const speedup = median(ratios)
    speedups.set(set.name, speedup)
    const viaWasm = await medianOpsPerSecond(`xxhash-wasm ${set.name}`, keys.length, () => {
      let x = 0
      for (let i = 0; i < keys.length; i++) x ^= wasm.h32(keys[i], seedA) ^ wasm.h32(keys[i], seedB)
      return x
    }, time)
    const viaCoreWasm = await medianOpsPerSecond(`core wasm ${set.name}`, keys.length, () => {
      let x = 0
      for (let i = 0; i < keys.length; i++) {
        withWasm.hash(keys[i])
        x ^= withWasm.pair[0] ^ withWasm.pair[1]
      }
      return x
    }, time)
    const ns = (ops: number) => `${(1e9 / ops).toFixed(0)} ns`
    report.add({
      suite: 'hashing',
      task: `${set.name}, both lanes`,
      subject: 'bloomkit KeyHasher (string)',
      batch: 1,
      opsPerSecond: median(samples.now),
      notes: `${speedup.toFixed(2)}× before issue 25 (${ns(median(samples.old))}; rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}, ${rounds} paired); with core's wasm (${set.length === 0 || set.length >= WASM_MIN_STRING_LENGTH ? 'used from' : 'unused below'} ${WASM_MIN_STRING_LENGTH} chars): ${ns(viaCoreWasm)}; two xxhash-wasm h32: ${ns(viaWasm)}`,
    })
  }
  for (const [step, set] of sets.entries()) {
    report.progress(sets.length + step, sets.length * 2, `${set.name}: bytes`)
    const bytes = set.keys.map((s) => encoder.encode(s))
    const jsBytes = await medianOpsPerSecond(`KeyHasher bytes ${set.name}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < bytes.length; i++) {
        hasher.hash(bytes[i])
        x ^= hasher.pair[0] ^ hasher.pair[1]
      }
      return x
    }, time)
    const coreWasmBytes = await medianOpsPerSecond(`core wasm bytes ${set.name}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < bytes.length; i++) {
        withWasm.hash(bytes[i])
        x ^= withWasm.pair[0] ^ withWasm.pair[1]
      }
      return x
    }, time)
    const wasmBytes = await medianOpsPerSecond(`xxhash-wasm bytes ${set.name}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < bytes.length; i++) x ^= wasm.h32Raw(bytes[i], seedA) ^ wasm.h32Raw(bytes[i], seedB)
      return x
    }, time)
    report.add({
      suite: 'hashing',
      task: `${set.name}, both lanes`,
      subject: 'bloomkit KeyHasher (Uint8Array)',
      batch: 1,
      opsPerSecond: jsBytes,
      notes: `with core's wasm: ${(1e9 / coreWasmBytes).toFixed(0)} ns; two xxhash-wasm h32Raw: ${(1e9 / wasmBytes).toFixed(0)} ns`,
    })
  }
  const targeted = [...speedups].filter(([name]) => TARGET_LENGTHS.some((length) => name === `${length}-char key`))
  const slowest = [...speedups].reduce((a, b) => (b[1] < a[1] ? b : a))
  const weakest = targeted.reduce((a, b) => (b[1] < a[1] ? b : a))
  report.add({
    suite: 'hashing',
    task: 'target: string keys vs before issue 25',
    subject: 'KeyHasher now / before',
    batch: 1,
    opsPerSecond: 0,
    notes: `16–64 chars (target ≥ ${TARGET_SPEEDUP}×): ${targeted.map(([name, r]) => `${name} ${r.toFixed(2)}×`).join(', ')}, lowest ${weakest[1].toFixed(2)}× ${weakest[1] >= TARGET_SPEEDUP ? 'met' : 'MISSED'}; every key set (target: none slower): lowest ${slowest[1].toFixed(2)}× (${slowest[0]}); medians of paired rounds`,
  })
}
