import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { isBloomError, type BloomKey, type HashScheme } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { openLayeredSnapshot, openSnapshot } from '@bloomkit/memory-backend/reader'
import { prop } from '../../../test-support/property-test.js'
import { earlierGoldenSnapshot, GOLDEN_NAMES, GOLDEN_NOW, goldenKeys, goldenProbes, goldenSnapshot, ROTATING_STEPS } from '../../../test-support/golden-snapshots.js'
import { detachedBytes } from '../../../test-support/bad-inputs.js'

// The reader (issue 37) answers as the full filter does for every key: its own XXH32 and positions
// are a second implementation of docs/SPEC.md sections 2–5, held here to core's.

const spec = readFileSync(new URL('../../../docs/SPEC.md', import.meta.url), 'utf8')
const specHex = (tag: string) => Buffer.from(spec.match(new RegExp('```' + tag + '\\n([0-9a-f]+)\\n```'))![1], 'hex')

/** Strings of every kind the hashers treat differently, and binary keys, of every length up to 10 KB. */
const stringKeys = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }), // any UTF-16 unit, lone surrogates included
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  // Latin-1 and two-byte UTF-8 (chars 0x80–0x7ff, which a char-code pass must not take as bytes), and surrogates.
  fc.string({ unit: fc.integer({ min: 0, max: 0xff }).map((code) => String.fromCharCode(code)), maxLength: 20 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x7ff }).map((code) => String.fromCharCode(code)), maxLength: 20 }),
  fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((code) => String.fromCharCode(code)), maxLength: 8 }),
  fc.string({ unit: 'binary', minLength: 14, maxLength: 70 }), // around 16 bytes (the stripes) and 32 (core's encodeInto)
)
const longKey = fc.tuple(fc.integer({ min: 0, max: 10_240 }), fc.integer(), fc.boolean()).map(([length, seed, ascii]) => {
  let state = seed
  const next = () => (state = (Math.imul(state, 1_103_515_245) + 12_345) | 0) >>> 16
  return ascii ? Array.from({ length }, () => String.fromCharCode(32 + (next() % 95))).join('') : Uint8Array.from({ length }, next)
})
const keys: fc.Arbitrary<BloomKey> = fc.oneof(stringKeys, fc.uint8Array({ maxLength: 40 }), longKey)

/**
 * Parameters of every scheme, with 1 to 300 shards of 8 bits up to 64 blocks: saturated filters,
 * and sparse ones (most of them), where a key hashed wrong reads absent.
 */
const parameters = fc
  .record({
    scheme: fc.constantFrom<HashScheme>(1, 2, 3),
    hashes: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 64 })),
    shards: fc.oneof(fc.constant(1), fc.integer({ min: 2, max: 300 })),
    units: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 8, max: 64 })),
    seed: fc.nat({ max: 0xffffffff }),
  })
  .map(({ scheme, hashes, shards, units, seed }) => {
    // A shard holds at least `hashes` bits: whole 64-bit words (classic) or 512-bit blocks (blocked).
    const multiple = scheme === 2 ? 512 : 64
    const shardBits = Math.max(units, Math.ceil(hashes / multiple)) * multiple - (scheme === 2 || units === 1 ? 0 : 8)
    return { bits: shardBits * shards, hashes, shards, seed, scheme }
  })

function expectSameAnswers(read: { has(key: BloomKey): boolean; hasMany(keys: BloomKey[]): boolean[] }, full: { has(key: BloomKey): boolean | Promise<boolean> }, all: BloomKey[]): void {
  const answers = all.map((key) => full.has(key))
  expect(all.map((key) => read.has(key))).toEqual(answers)
  expect(read.hasMany(all)).toEqual(answers)
}

describe('openSnapshot: the full filter’s answers', () => {
  prop([parameters, fc.array(keys, { maxLength: 60 }), fc.array(keys, { maxLength: 60 })], { numRuns: 300 })(
    'every scheme, layout and shard count, for every kind of key',
    (params, members, probes) => {
      const filter = MemoryBloomFilter.fromParametersSync(params)
      filter.addMany(members)
      const read = openSnapshot(filter.export())
      expect(members.every((key) => read.has(key))).toBe(true)
      expectSameAnswers(read, filter, [...members, ...probes])
    },
  )

  test('a filter of 300 keys: as many false positives as the full filter, on the same keys', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 300, errorRate: 0.05, seed: 5 })
    filter.addMany(goldenKeys(300))
    const read = openSnapshot(filter.export())
    const probes = goldenProbes(20_000)
    expect(read.hasMany(probes).filter(Boolean).length).toBeGreaterThan(200) // so that "equal" compares something
    expectSameAnswers(read, filter, [...goldenKeys(300), ...probes])
  })

  test.each(['hex snapshot', 'hex snapshot remixed', 'hex snapshot blocked'])('SPEC section 7 `%s`: alpha, beta and gamma are present', (tag) => {
    const read = openSnapshot(specHex(tag))
    const full = MemoryBloomFilter.importSync(specHex(tag))
    expect(read.hasMany(['alpha', 'beta', 'gamma'])).toEqual([true, true, true])
    expectSameAnswers(read, full, goldenProbes(3000))
  })

  test.each(['fixed-blocked', 'fixed-classic'])('the golden snapshot %s, and the one before honest sizing', (name) => {
    for (const bytes of [goldenSnapshot('memory', name, new Uint8Array()), earlierGoldenSnapshot('memory', name)]) {
      expectSameAnswers(openSnapshot(bytes), MemoryBloomFilter.importSync(bytes), [...goldenKeys(1500), ...goldenProbes(5000)])
    }
  })

  prop([parameters, fc.array(keys, { maxLength: 40 }), fc.array(keys, { maxLength: 40 })], { numRuns: 100 })(
    'a counting filter’s exportPlain(), after adds and removes',
    (params, members, removed) => {
      const counting = CountingMemoryFilter.fromParametersSync(params)
      counting.addMany([...members, ...removed])
      counting.removeMany(removed.filter((key) => counting.has(key)))
      expectSameAnswers(openSnapshot(counting.exportPlain()), counting, [...members, ...removed])
    },
  )

  test('the snapshot is read in place: a view inside a larger buffer works', () => {
    const filter = MemoryBloomFilter.fromParametersSync({ bits: 4096, hashes: 5, shards: 2, seed: 9, layout: 'blocked' })
    filter.addMany(['a', 'b'])
    const snapshot = filter.export()
    const padded = new Uint8Array(snapshot.length + 7)
    padded.set(snapshot, 3)
    expect(openSnapshot(padded.subarray(3, 3 + snapshot.length)).hasMany(['a', 'b'])).toEqual([true, true])
  })
})

describe('openLayeredSnapshot: the layered filter’s answers', () => {
  const layeredOptions = fc.record({
    capacity: fc.integer({ min: 1, max: 40 }),
    errorRate: fc.constantFrom(0.2, 0.05, 0.001),
    growth: fc.integer({ min: 1, max: 3 }),
    layout: fc.constantFrom('blocked' as const, 'classic' as const, undefined),
    shards: fc.constantFrom(1, 3, undefined),
    seed: fc.nat({ max: 0xffffffff }),
  })

  prop([layeredOptions, fc.array(keys, { maxLength: 120 }), fc.array(keys, { maxLength: 40 })], { numRuns: 100 })('scalable filters of many layers', (options, members, probes) => {
    const filter = LayeredMemoryFilter.createSync(options)
    filter.addMany(members)
    const read = openLayeredSnapshot(filter.export())
    expect(members.every((key) => read.has(key))).toBe(true)
    expectSameAnswers(read, filter, [...members, ...probes])
  })

  prop([layeredOptions, fc.integer({ min: 1, max: 4 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.array(keys, { maxLength: 20 })), { maxLength: 6 }), fc.integer({ min: 0, max: 6 })], { numRuns: 100 })(
    'rotating filters: the same layers left out as windows pass, by the same clock',
    (options, keep, batches, later) => {
      let now = GOLDEN_NOW
      const clock = () => now
      const filter = LayeredMemoryFilter.createSync({ ...options, growth: options.growth - 1 || undefined, window: { seconds: 60, keep }, clock })
      for (const [windows, batch] of batches) {
        now += windows * 60_000
        filter.addMany(batch)
      }
      const all = batches.flatMap(([, batch]) => batch)
      const read = openLayeredSnapshot(filter.export(), { clock })
      const full = LayeredMemoryFilter.importSync(filter.export(), { clock })
      expectSameAnswers(read, full, all)
      // Time passes for both: the reader leaves out the windows the full filter drops.
      now += later * 60_000
      expectSameAnswers(read, full, all)
    },
  )

  test.each(['hex layered scalable', 'hex layered scalable scheme 1', 'hex layered rotating'])('SPEC section 8.2 `%s`', (tag) => {
    const clock = () => 180_000
    const read = openLayeredSnapshot(specHex(tag), { clock })
    const full = LayeredMemoryFilter.importSync(specHex(tag), { clock })
    const members = tag === 'hex layered rotating' ? ['alpha', 'beta', 'gamma'] : ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
    expect(read.hasMany(members).every(Boolean)).toBe(true)
    expectSameAnswers(read, full, [...members, ...goldenProbes(3000)])
  })

  test('the rotating vector after its windows passed: nothing is present, as in the full filter', () => {
    const clock = () => 300_000 // window 5: windows 2 and 3 are past keep = 2
    expect(openLayeredSnapshot(specHex('hex layered rotating'), { clock }).hasMany(['alpha', 'beta', 'gamma'])).toEqual([false, false, false])
    expect(LayeredMemoryFilter.importSync(specHex('hex layered rotating'), { clock }).hasMany(['alpha', 'beta', 'gamma'])).toEqual([false, false, false])
  })

  test.each(GOLDEN_NAMES)('the golden snapshot %s, and the one before honest sizing', (name) => {
    const clock = () => GOLDEN_NOW + ROTATING_STEPS[ROTATING_STEPS.length - 1]
    for (const bytes of [goldenSnapshot('memory', name, new Uint8Array()), earlierGoldenSnapshot('memory', name)]) {
      expectSameAnswers(openLayeredSnapshot(bytes, { clock }), LayeredMemoryFilter.importSync(bytes, { clock }), [...goldenKeys(3000), ...goldenProbes(5000)])
    }
  })
})

describe('what the reader refuses, with the full filter’s codes', () => {
  const filter = MemoryBloomFilter.fromParametersSync({ bits: 1024, hashes: 4, shards: 1, seed: 1 })
  const read = openSnapshot(filter.export())

  test.each([
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
    ['an object', { length: 0 }],
    ['a detached Uint8Array', detachedBytes()],
  ])('has(%s): BLOOM_INVALID_KEY, a BloomError isBloomError recognises', (_, key) => {
    const refusal = (fn: () => unknown) => {
      try {
        fn()
      } catch (error) {
        return isBloomError(error) ? error.code : `not a BloomError: ${String(error)}`
      }
      return 'answered'
    }
    expect(refusal(() => read.has(key as BloomKey))).toBe('BLOOM_INVALID_KEY')
    expect(refusal(() => filter.has(key as BloomKey))).toBe('BLOOM_INVALID_KEY')
    expect(refusal(() => read.hasMany([key as BloomKey]))).toBe('BLOOM_INVALID_KEY')
  })

  test.each([
    ['a string', 'abc'],
    ['a Uint8Array', new Uint8Array(3)],
    ['a number', 3],
    ['null', null],
    ['an async iterable', (async function* () {})()],
  ])('hasMany(%s): BLOOM_INVALID_PARAMETER', (_, keys) => {
    expect(() => read.hasMany(keys as Iterable<BloomKey>)).toThrow(expect.objectContaining({ name: 'BloomError', code: 'BLOOM_INVALID_PARAMETER' }))
    expect(() => filter.hasMany(keys as Iterable<BloomKey>)).toThrow(expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER' }))
  })

  test('hasMany takes any iterable of keys: a Set, a generator', () => {
    const set = new Set(['x', 'y'])
    expect(read.hasMany(set)).toEqual(filter.hasMany(set))
    expect(read.hasMany((function* () { yield 'x'; yield new Uint8Array(2) })())).toEqual([filter.has('x'), filter.has(new Uint8Array(2))])
  })

  test('a layered snapshot: openSnapshot names openLayeredSnapshot; a counting one: exportPlain()', () => {
    const layered = LayeredMemoryFilter.createSync({ capacity: 10, errorRate: 0.01, growth: 2 }).export()
    expect(() => openSnapshot(layered)).toThrow(expect.objectContaining({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringContaining('openLayeredSnapshot') }))
    const counting = CountingMemoryFilter.fromParametersSync({ bits: 1024, hashes: 4, shards: 1, seed: 1 }).export()
    for (const open of [openSnapshot, openLayeredSnapshot]) {
      expect(() => open(counting)).toThrow(expect.objectContaining({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringContaining('exportPlain()') }))
    }
    expect(() => MemoryBloomFilter.importSync(counting)).toThrow(expect.objectContaining({ code: 'BLOOM_UNSUPPORTED_VERSION' }))
  })

  test.each([['an ArrayBuffer', new ArrayBuffer(8)], ['a string', 'BLMK'], ['null', null], ['a DataView', new DataView(new ArrayBuffer(44))]])('a snapshot that is %s: BLOOM_INVALID_PARAMETER', (_, bytes) => {
    for (const open of [openSnapshot, openLayeredSnapshot]) expect(() => open(bytes as unknown as Uint8Array)).toThrow(expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER' }))
    expect(() => MemoryBloomFilter.importSync(bytes as unknown as Uint8Array)).toThrow(expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER' }))
  })
})
