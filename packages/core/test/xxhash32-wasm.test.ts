import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import wabt from 'wabt'
import xxhash from 'xxhash-wasm'
import { KeyHasher } from '@bloomkit/core/store'
import { compileWasmXxh32, LANE_B_SEED_XOR, WASM_MIN_BYTE_LENGTH, WASM_MIN_STRING_LENGTH } from '@bloomkit/core/spec'

// Core's WebAssembly XXH32 (src/hashing/xxhash32.wat) against xxhash-wasm, an independent build of the
// reference C code. Called directly: on Node 20 core keeps WebAssembly off its hot path (see
// wasmHashingSafe), and Chromium (memory-browser, no-wasm tests) runs it from KeyHasher.

const reference = await xxhash()
const ours = await compileWasmXxh32()

function both(key: string | Uint8Array, seed: number): [number, number] {
  const seedB = (seed ^ LANE_B_SEED_XOR) >>> 0
  return typeof key === 'string' ? [reference.h32(key, seed), reference.h32(key, seedB)] : [reference.h32Raw(key, seed), reference.h32Raw(key, seedB)]
}

function viaOurs(key: string | Uint8Array, seed: number): [number, number] {
  const pair = new Int32Array(2)
  if (typeof key === 'string') ours.hashString(key, seed >>> 0, (seed ^ LANE_B_SEED_XOR) >>> 0, pair)
  else ours.hashBytes(key, seed >>> 0, (seed ^ LANE_B_SEED_XOR) >>> 0, pair)
  return [pair[0] >>> 0, pair[1] >>> 0]
}

const seeds = fc.integer({ min: 0, max: 0xffffffff })

describe('WebAssembly XXH32', () => {
  test('the committed bytes are the .wat compiled (run scripts/build-wasm.mjs after editing it)', async () => {
    const source = readFileSync(new URL('../src/hashing/xxhash32.wat', import.meta.url), 'utf8')
    const module = (await wabt()).parseWat('xxhash32.wat', source)
    module.validate()
    const compiled = Buffer.from(module.toBinary({ log: false, write_debug_names: false }).buffer).toString('base64')
    module.destroy()
    const generated = readFileSync(new URL('../src/hashing/xxhash32-wasm-bytes.ts', import.meta.url), 'utf8')
    expect(/'([A-Za-z0-9+/=]+)'/.exec(generated)?.[1]).toBe(compiled)
  })

  test('XXH32 reference vectors: empty input, and every length around the 4- and 16-byte steps', () => {
    expect(viaOurs('', 0)[0]).toBe(0x02cc5d05)
    for (let length = 0; length <= 70; length++) {
      const key = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(2).slice(0, length)
      expect(viaOurs(key, 0x1234567)).toEqual(both(key, 0x1234567))
    }
  })

  prop([fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 100 })), seeds], { numRuns: 2000 })(
    'equals xxhash-wasm for every string (lone surrogates as U+FFFD)',
    (key, seed) => {
      expect(viaOurs(key, seed)).toEqual(both(key, seed))
    },
  )

  prop([fc.uint8Array({ maxLength: 400 }), seeds], { numRuns: 1000 })('equals xxhash-wasm for every byte key', (key, seed) => {
    expect(viaOurs(key, seed)).toEqual(both(key, seed))
  })

  test('keys past the module’s first 64 KiB grow its memory, and shorter keys after them still hash right', () => {
    for (const key of ['y'.repeat(70_000), 'ü'.repeat(50_000), new Uint8Array(300_000).fill(7), 'short', 'z'.repeat(WASM_MIN_STRING_LENGTH)]) {
      expect(viaOurs(key, 99)).toEqual(both(key, 99))
    }
  })

  test('a KeyHasher given it serves long keys through it, with the same hashes as the pure-JS pass', () => {
    const withWasm = new KeyHasher(5, ours)
    const pureJs = new KeyHasher(5)
    expect(withWasm.usesWasm).toBe(true)
    for (const key of ['x'.repeat(WASM_MIN_STRING_LENGTH), 'é'.repeat(WASM_MIN_STRING_LENGTH + 7), new Uint8Array(WASM_MIN_BYTE_LENGTH + 1).fill(200), 'short']) {
      withWasm.hash(key)
      pureJs.hash(key)
      expect([withWasm.a, withWasm.b]).toEqual([pureJs.a, pureJs.b])
      expect([withWasm.a, withWasm.b]).toEqual(both(key, 5))
    }
  })
})
