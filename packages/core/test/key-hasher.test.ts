import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { describe, expect, test } from 'vitest'
import xxhash from 'xxhash-wasm'
import { BloomError } from '@bloomkit/core'
import { KeyHasher } from '@bloomkit/core/store'
import {
  encodeUtf8,
  ENCODE_MIN_STRING_LENGTH,
  LANE_B_SEED_XOR,
  loadWasmHasher,
  wasmHashingSafe,
  WASM_MIN_BYTE_LENGTH,
  WASM_MIN_STRING_LENGTH,
  xxh32PairBytes,
  xxh32PairWords,
} from '@bloomkit/core/spec'

const wasm = await xxhash()
const pureJs = (seed: number) => new KeyHasher(seed)

/** The reference: xxhash-wasm's XXH32 of the key's UTF-8 bytes, with both lane seeds. */
function reference(key: string | Uint8Array, seed: number): [number, number] {
  const seedB = (seed ^ LANE_B_SEED_XOR) >>> 0
  return typeof key === 'string' ? [wasm.h32(key, seed >>> 0), wasm.h32(key, seedB)] : [wasm.h32Raw(key, seed >>> 0), wasm.h32Raw(key, seedB)]
}

const seeds = fc.integer({ min: 0, max: 0xffffffff })
const strings = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // any UTF-16 unit, lone surrogates included
  fc.string({ minLength: WASM_MIN_STRING_LENGTH - 2, maxLength: WASM_MIN_STRING_LENGTH + 300 }),
  // Around the switch from the char-code pass to TextEncoder + words, ASCII and not.
  fc.string({ minLength: ENCODE_MIN_STRING_LENGTH - 3, maxLength: ENCODE_MIN_STRING_LENGTH + 40 }),
  fc.string({ unit: 'binary', minLength: ENCODE_MIN_STRING_LENGTH - 3, maxLength: ENCODE_MIN_STRING_LENGTH + 40 }),
)
const byteKeys = fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ minLength: WASM_MIN_BYTE_LENGTH - 2, maxLength: 400 }))

describe('KeyHasher', () => {
  test('XXH32 reference vectors (empty input, seed 0 and 1)', () => {
    const hasher = pureJs(0)
    hasher.hash('')
    expect(hasher.a).toBe(0x02cc5d05)
    const bytes = pureJs(1)
    bytes.hash(new Uint8Array(0))
    expect(bytes.a).toBe(wasm.h32Raw(new Uint8Array(0), 1))
  })

  prop([strings, seeds], { numRuns: 2000 })('the pure-JS pass equals xxhash-wasm for every string', (key, seed) => {
    const hasher = pureJs(seed)
    hasher.hash(key)
    expect([hasher.a, hasher.b]).toEqual(reference(key, seed))
  })

  prop([byteKeys, seeds], { numRuns: 1000 })('the pure-JS pass equals xxhash-wasm for every byte key', (key, seed) => {
    const hasher = pureJs(seed)
    hasher.hash(key)
    expect([hasher.a, hasher.b]).toEqual(reference(key, seed))
  })

  prop([fc.string({ unit: 'binary', maxLength: 200 })], { numRuns: 2000 })('encodeUtf8 writes the bytes TextEncoder writes (lone surrogates as U+FFFD)', (text) => {
    const bytes = new Uint8Array(text.length * 3)
    const length = encodeUtf8(text, bytes)
    expect(bytes.subarray(0, length)).toEqual(new TextEncoder().encode(text))
  })

  prop([fc.uint8Array({ maxLength: 200 }), seeds], { numRuns: 1000 })('the word pass equals the byte pass', (key, seed) => {
    const buffer = new Uint8Array(key.length + 3)
    buffer.set(key)
    const words = new Int32Array(buffer.buffer, 0, buffer.length >>> 2)
    const [viaWords, viaBytes] = [new Int32Array(2), new Int32Array(2)]
    xxh32PairWords(buffer, words, key.length, seed, seed ^ LANE_B_SEED_XOR, viaWords)
    xxh32PairBytes(key, key.length, seed, seed ^ LANE_B_SEED_XOR, viaBytes)
    expect(viaWords).toEqual(viaBytes)
  })

  test('one hasher gives each key its own hash whatever it hashed before (its scratch buffer grows and is reused)', () => {
    const hasher = pureJs(3)
    const keys = ['x'.repeat(2000), 'é'.repeat(40), 'a'.repeat(ENCODE_MIN_STRING_LENGTH), '\ud800'.repeat(300), 'short', 'ü'.repeat(3)]
    for (const key of [...keys, ...keys.reverse()]) {
      hasher.hash(key)
      expect([hasher.a, hasher.b]).toEqual(reference(key, 3))
    }
  })

  // KeyHasher's own WebAssembly branch runs where wasmHashingSafe() (Chromium: memory-browser tests; xxhash32-wasm.test.ts calls it directly).
  test('WebAssembly is used from the hot path only where the runtime can call it safely', async () => {
    const hasher = await loadWasmHasher()
    const major = Number(process.versions.node.split('.')[0])
    expect(wasmHashingSafe()).toBe(major >= 22)
    expect(hasher !== undefined).toBe(wasmHashingSafe())
  })

  test('a string and its UTF-8 bytes hash alike; lone surrogates hash as U+FFFD', () => {
    const hasher = pureJs(7)
    const pairs: Array<[string, Uint8Array]> = [
      ['héllo wörld', new TextEncoder().encode('héllo wörld')],
      ['\ud800', new TextEncoder().encode('\ufffd')],
    ]
    for (const [text, bytes] of pairs) {
      hasher.hash(text)
      const fromText = [hasher.a, hasher.b]
      hasher.hash(bytes)
      expect([hasher.a, hasher.b]).toEqual(fromText)
    }
  })

  test('keys of any other type are refused with BLOOM_INVALID_KEY', () => {
    const hasher = pureJs(0)
    for (const bad of [42, null, undefined, {}, [1, 2], new Uint16Array(2), Symbol('k'), 10n]) {
      expect(() => hasher.hash(bad as never)).toThrowError(expect.objectContaining({ code: 'BLOOM_INVALID_KEY' }))
      expect(() => hasher.hash(bad as never)).toThrow(BloomError)
    }
  })
})
