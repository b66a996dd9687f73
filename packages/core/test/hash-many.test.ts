import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { describe, expect, test } from 'vitest'
import xxhash from 'xxhash-wasm'
import { BloomError, BloomFilter, type BloomKey } from '@bloomkit/core'
import { createKeyHasher, KeyHasher, layeredBatch } from '@bloomkit/core/store'
import { ReferenceBitStore } from '@bloomkit/core/testing'
import { compileWasmXxh32, LANE_B_SEED_XOR } from '@bloomkit/core/spec'

// KeyHasher.hashMany (issue 36 item 3): a batch of keys hashed in one pass gives each key exactly
// the pair that hash() gives it, with the pure-JS pass and with WebAssembly (called directly here:
// on Node 20 core keeps WebAssembly off its hot path, see wasmHashingSafe).

const reference = await xxhash()
const wasmApi = await compileWasmXxh32()
const hashers = { 'pure JS': (seed: number) => new KeyHasher(seed), WebAssembly: (seed: number) => new KeyHasher(seed, wasmApi) }

function expected(key: BloomKey, seed: number): [number, number] {
  const seedB = (seed ^ LANE_B_SEED_XOR) >>> 0
  return typeof key === 'string' ? [reference.h32(key, seed >>> 0) | 0, reference.h32(key, seedB) | 0] : [reference.h32Raw(key, seed >>> 0) | 0, reference.h32Raw(key, seedB) | 0]
}

function hashedMany(hasher: KeyHasher, keys: BloomKey[], from: number, count: number): Array<[number, number]> {
  // Room past the batch, filled with a marker, so that a write beyond it shows.
  const pairs = new Int32Array(2 * count + 4).fill(0x5a5a5a5a)
  hasher.hashMany(keys, from, count, pairs)
  expect([...pairs.subarray(2 * count)]).toEqual([0x5a5a5a5a, 0x5a5a5a5a, 0x5a5a5a5a, 0x5a5a5a5a])
  return Array.from({ length: count }, (_, i) => [pairs[2 * i], pairs[2 * i + 1]])
}

/** Keys as code builds them: template literals of two halves, ConsStrings from 13 chars on. */
const built = (key: string) => `${key.slice(0, key.length >> 1)}${key.slice(key.length >> 1)}`

const keyArrays = fc.array(
  fc.oneof(
    { arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 0, maxLength: 120 }), weight: 6 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 1 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
    { arbitrary: fc.uint8Array({ maxLength: 40 }), weight: 1 },
  ),
  { maxLength: 300 },
)

describe.each(Object.entries(hashers))('KeyHasher.hashMany, %s', (_, make) => {
  prop([keyArrays, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 0xffffffff }), fc.boolean()], { numRuns: 400 })(
    'gives every key of any batch the pair hash() gives it (ASCII or not, flat or built, strings or bytes)',
    (keys, a, b, seed, build) => {
      const batch = build ? keys.map((key) => (typeof key === 'string' ? built(key) : key)) : keys
      const from = batch.length === 0 ? 0 : a % batch.length
      const count = batch.length === 0 ? 0 : b % (batch.length - from + 1)
      const many = hashedMany(make(seed), batch, from, count)
      expect(many).toEqual(batch.slice(from, from + count).map((key) => expected(key, seed)))
    },
  )

  test('ASCII batches of every shape the one pass takes: short, around 16 bytes, long, the whole array or a slice', () => {
    for (const length of [13, 15, 16, 17, 31, 36, 60, 64, 97, 300]) {
      const keys = Array.from({ length: 1000 }, (_, i) => built(`${i}:`.padEnd(length, 'abcdefghijklmnopqrstuvwxyz')))
      for (const [from, count] of [[0, 1000], [256, 256], [999, 1], [3, 8]]) {
        expect(hashedMany(make(42), keys, from, count)).toEqual(keys.slice(from, from + count).map((key) => expected(key, 42)))
      }
    }
  })

  test('a lone surrogate at the end of one key and at the start of the next: joined, they would pair up', () => {
    // Joined, '\ud83d' + '\ude00' is one code point (4 bytes); apart, each is U+FFFD (3 bytes each).
    const keys = ['first-key-long-enough\ud83d', '\ude00second-key-long-enough', ...Array.from({ length: 10 }, (_, i) => `plain-ascii-key-${i}`)]
    expect(hashedMany(make(7), keys, 0, keys.length)).toEqual(keys.map((key) => expected(key, 7)))
    expect(expected(keys[0], 7)).toEqual(expected('first-key-long-enough\ufffd', 7))
  })

  test('a key that is no string or Uint8Array is refused with BLOOM_INVALID_KEY, as by hash()', () => {
    const keys = [...Array.from({ length: 20 }, (_, i) => `user:${i}-long-enough`), 42 as unknown as string]
    const pairs = new Int32Array(2 * keys.length)
    expect(() => make(1).hashMany(keys, 0, keys.length, pairs)).toThrow(BloomError)
    expect(() => make(1).hashMany(keys, 0, keys.length, pairs)).toThrow(/BLOOM_INVALID_KEY|key must be/)
  })
})

test('the default addMany/hasMany (an async store) hash an array a run at a time and set the bits add() sets', async () => {
  const parameters = { bits: 3 * 65_536, hashes: 7, shards: 3, seed: 99 }
  const make = async () => new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed))
  // Runs of 1024 across batches of 16 384: ASCII keys built by template literals, non-ASCII ones, byte keys.
  const keys: BloomKey[] = Array.from({ length: 20_000 }, (_, i) =>
    i % 997 === 0 ? `clé-${i}-non-ascii` : i % 1009 === 0 ? new TextEncoder().encode(`bytes-${i}`) : built(`user:${i}-with-a-longer-tail`))
  const byMany = await make()
  const byOne = await make()
  const answers = await byMany.addMany(keys)
  for (const key of keys) await byOne.add(key)
  expect(await byMany.export()).toEqual(await byOne.export())
  expect(answers.filter(Boolean).length).toBeGreaterThan(0)
  expect((await byMany.hasMany(keys)).every(Boolean)).toBe(true)
})

test('layered batches hash their keys a run at a time: hashPairs gives every key the lanes hash() gives it', async () => {
  const hasher = await createKeyHasher(5)
  const keys: BloomKey[] = Array.from({ length: 2_500 }, (_, i) => (i % 499 === 0 ? `ключ-${i}` : i % 503 === 0 ? new Uint8Array([i & 255, 1, 2]) : built(`user:${i}-of-a-layered-filter`)))
  const pairs = layeredBatch.hashPairs(hasher, keys)
  const expectedPairs = keys.flatMap((key) => expected(key, 5).map((lane) => lane >>> 0))
  expect([...pairs]).toEqual(expectedPairs)
})
