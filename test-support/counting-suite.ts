import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
// Values from core's sources (the same modules the tests' '@bloomkit/core' alias loads); the
// filters are typed structurally, since a package's tests see core's built types, not these.
import { BloomError, estimateErrorRate, type FilterParameters, type FilterParametersInput } from '../packages/core/src/index.js'

type Answer<T> = T | Promise<T>

/** What the suite calls on a plain filter. */
interface PlainLike {
  readonly parameters: FilterParameters
  add(key: string): Answer<boolean>
  export(): Answer<Uint8Array>
  merge(other: never): Answer<void>
  close(): Answer<void>
}

/** What the suite calls on a counting filter, sync or async: it awaits every answer. */
interface CountingLike extends PlainLike {
  has(key: string): Answer<boolean>
  remove(key: string): Answer<boolean>
  addMany(keys: string[]): Answer<boolean[]>
  hasMany(keys: string[]): Answer<boolean[]>
  removeMany(keys: string[]): Answer<boolean[]>
  describeCounters(): Answer<{ counters: number; nonZero: number; saturated: number }>
  exportPlain(): Answer<Uint8Array>
  exportChunks(): AsyncIterable<Uint8Array>
}
import { chernoffInterval } from './chernoff.js'

export interface CountingSuiteOptions {
  /** The backend's name, for test titles. */
  readonly name: string
  /** A new, empty counting filter with these parameters, isolated from every other. */
  readonly create: (parameters: FilterParametersInput) => Promise<CountingLike>
  /** A new, empty plain filter with these parameters (for the mixed-merge refusal). */
  readonly createPlain: (parameters: FilterParametersInput) => Promise<PlainLike>
  /** The filter in a counting snapshot, on this backend. */
  readonly importCounting: (snapshot: Uint8Array) => Promise<CountingLike>
  /** Model-test runs (each a fresh filter): fewer for remote stores. */
  readonly runs?: number
  /** Run the FPR-at-capacity test (fast enough on this backend). */
  readonly fpr?: { readonly capacity: number; readonly probes: number }
}

/** Fixed: the same commit gives the same runs. */
const MODEL_SEED = 20261125

/**
 * The counting filter's promise, on any backend: a fast-check model test against a multiset (no
 * false negatives for any sequence of adds and removes of added keys), sticky saturation, removal
 * of absent keys, snapshots byte for byte, the plain export, the refusals.
 */
export function countingFilterSuite(options: CountingSuiteOptions): void {
  const { name, create } = options
  const small = { bits: 2048, hashes: 4, shards: 2, seed: 11, layout: 'blocked' as const }

  describe(`counting filter on ${name}`, () => {
    test.each([
      ['blocked', { bits: 1024, hashes: 5, shards: 2, seed: 3, layout: 'blocked' as const }],
      ['classic', { bits: 256, hashes: 5, shards: 2, seed: 3, layout: 'classic' as const }],
    ])('model test (%s): any sequence of adds and removes of added keys leaves every key still counted present', async (_, parameters) => {
      console.log(`counting model test on ${name}, fast-check seed ${MODEL_SEED}`)
      // Few keys, small filters: counters collide and saturate often, where bugs would show.
      const op = fc.oneof(
        fc.record({ kind: fc.constant('add' as const), key: fc.integer({ min: 0, max: 40 }), times: fc.integer({ min: 1, max: 20 }) }),
        fc.record({ kind: fc.constant('remove' as const), pick: fc.nat(), times: fc.integer({ min: 1, max: 3 }) }),
        fc.record({ kind: fc.constant('batch' as const), keys: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12 }), remove: fc.boolean() }),
      )
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
          const filter = await create(parameters)
          const model = new Map<string, number>()
          try {
            for (const step of ops) {
              if (step.kind === 'add') {
                const key = `k:${step.key}`
                for (let i = 0; i < step.times; i++) await filter.add(key)
                model.set(key, (model.get(key) ?? 0) + step.times)
              } else if (step.kind === 'remove') {
                const added = [...model.keys()]
                if (added.length === 0) continue
                const key = added[step.pick % added.length]
                const times = Math.min(step.times, model.get(key)!)
                for (let i = 0; i < times; i++) expect(await filter.remove(key)).toBe(true)
                if (model.get(key) === times) model.delete(key)
                else model.set(key, model.get(key)! - times)
              } else if (!step.remove) {
                const keys = step.keys.map((k) => `k:${k}`)
                await filter.addMany(keys)
                for (const key of keys) model.set(key, (model.get(key) ?? 0) + 1)
              } else {
                // Only keys still added, each no more often than it is counted.
                const left = new Map(model)
                const keys = step.keys.map((k) => `k:${k}`).filter((key) => {
                  const n = left.get(key) ?? 0
                  if (n === 0) return false
                  left.set(key, n - 1)
                  return true
                })
                expect(await filter.removeMany(keys)).toEqual(keys.map(() => true))
                for (const [key, n] of left) if (n === 0) model.delete(key)
                  else model.set(key, n)
              }
              const present = [...model.keys()]
              expect(await filter.hasMany(present)).toEqual(present.map(() => true))
            }
          } finally {
            await filter.close()
          }
        }),
        { seed: MODEL_SEED, numRuns: options.runs ?? 60, endOnFailure: true },
      )
    }, 120_000)

    test('saturation: a key added 40 times and removed 40 times takes no other key with it', async () => {
      // 64 positions, 4 hashes: the hot key's counters saturate, and the others share them.
      const filter = await create({ bits: 64, hashes: 4, shards: 1, seed: 5, layout: 'classic' })
      try {
        const others = Array.from({ length: 6 }, (_, i) => `other:${i}`)
        await filter.addMany(others)
        for (let i = 0; i < 40; i++) await filter.add('hot')
        expect((await filter.describeCounters()).saturated).toBeGreaterThan(0)
        for (let i = 0; i < 40; i++) await filter.remove('hot')
        expect(await filter.hasMany(others)).toEqual(others.map(() => true))
        // Its saturated counters stayed at 15: the hot key still reads present (sticky).
        expect(await filter.has('hot')).toBe(true)
        expect((await filter.describeCounters()).saturated).toBeGreaterThan(0)
      } finally {
        await filter.close()
      }
    })

    test('removing a key that reads absent changes nothing and returns false', async () => {
      const filter = await create(small)
      try {
        await filter.addMany(['a', 'b', 'c'])
        const before = await filter.export()
        expect(await filter.has('never')).toBe(false)
        expect(await filter.remove('never')).toBe(false)
        expect(await filter.removeMany(['never', 'nope'])).toEqual([false, false])
        expect(await filter.export()).toEqual(before)
        expect(await filter.remove('a')).toBe(true)
        expect(await filter.has('a')).toBe(false)
        expect(await filter.remove('a')).toBe(false)
      } finally {
        await filter.close()
      }
    })

    test('a key added twice is present until removed twice; remove and removeMany check their input', async () => {
      const filter = await create(small)
      try {
        expect(await filter.add('twice')).toBe(true)
        expect(await filter.add('twice')).toBe(false)
        expect(await filter.remove('twice')).toBe(true)
        expect(await filter.has('twice')).toBe(true)
        expect(await filter.removeMany(['twice'])).toEqual([true])
        expect(await filter.has('twice')).toBe(false)
        await expect(Promise.resolve().then(() => filter.remove(42 as never))).rejects.toMatchObject({ code: 'BLOOM_INVALID_KEY' })
        await expect(Promise.resolve().then(() => filter.removeMany(42 as never))).rejects.toThrow(/keys/)
      } finally {
        await filter.close()
      }
    })

    test('export, import and exportPlain: counters move byte for byte, and the plain snapshot sets every non-zero counter', async () => {
      const filter = await create(small)
      try {
        await filter.addMany(['x', 'y', 'z', 'x'])
        for (let i = 0; i < 20; i++) await filter.add('hot')
        const snapshot = await filter.export()
        expect(new DataView(snapshot.buffer, snapshot.byteOffset).getUint16(4, true)).toBe(3)
        const copy = await options.importCounting(snapshot)
        try {
          expect(await copy.export()).toEqual(snapshot)
          const chunks: Uint8Array[] = []
          for await (const chunk of filter.exportChunks()) chunks.push(chunk)
          expect(Buffer.concat(chunks)).toEqual(Buffer.from(snapshot))
          expect(await copy.remove('x')).toBe(true)
          expect(await copy.has('x')).toBe(true)
          expect(await copy.describeCounters()).toMatchObject({ counters: small.bits, saturated: (await filter.describeCounters()).saturated })
        } finally {
          await copy.close()
        }
        const plain = await filter.exportPlain()
        expect(plain.length).toBe(40 + small.bits / 8 + 4)
        const counters = snapshot.subarray(40, 40 + small.bits / 2)
        const bits = plain.subarray(40, 40 + small.bits / 8)
        for (let p = 0; p < small.bits; p++) {
          const counter = (counters[p >>> 1] >>> (p % 2 === 0 ? 4 : 0)) & 15
          expect(((bits[p >>> 3] >>> (7 - (p % 8))) & 1) === 1).toBe(counter !== 0)
        }
      } finally {
        await filter.close()
      }
    })

    test('merge adds counters (capped at 15) of a counting filter, and refuses a plain one either way', async () => {
      const a = await create(small)
      const b = await create(small)
      const plain = await options.createPlain(small)
      try {
        await a.addMany(['one', 'two'])
        await b.addMany(['two', 'three'])
        await a.merge(b as never)
        expect(await a.hasMany(['one', 'two', 'three'])).toEqual([true, true, true])
        expect(await a.remove('two')).toBe(true)
        expect(await a.has('two')).toBe(true)
        const refused = (run: () => unknown) => expect(Promise.resolve().then(run)).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/plain filter/) })
        await refused(() => a.merge(plain as never))
        await refused(() => plain.merge(a as never))
      } finally {
        await Promise.all([a.close(), b.close(), plain.close()])
      }
    })

    test('a plain snapshot is refused by the counting import, with a coded error naming the kind', async () => {
      const plain = await options.createPlain(small)
      try {
        await plain.add('k')
        const error = await options.importCounting(await plain.export()).catch((e: unknown) => e)
        expect(error).toBeInstanceOf(BloomError)
        expect(error).toMatchObject({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringMatching(/plain filter/) })
      } finally {
        await plain.close()
      }
    })

    if (options.fpr !== undefined) {
      const { capacity, probes } = options.fpr
      test(`the false-positive rate at capacity (${capacity} keys) is within the Chernoff bound of the plain filter's model`, async () => {
        const errorRate = 0.01
        const { sizeFilter } = await import('../packages/core/src/index.js')
        const parameters = sizeFilter({ capacity, errorRate, seed: 12345 })
        const filter = await create(parameters)
        try {
          const members = Array.from({ length: capacity }, (_, i) => `m:${i}`)
          await filter.addMany(members)
          // Removing and re-adding a tenth keeps the rate where it was: counts, not just bits.
          await filter.removeMany(members.slice(0, capacity / 10))
          await filter.addMany(members.slice(0, capacity / 10))
          let positives = 0
          for (let from = 0; from < probes; from += 10_000) {
            const answers = await filter.hasMany(Array.from({ length: Math.min(10_000, probes - from) }, (_, i) => `p:${from + i}`))
            for (const answer of answers) if (answer) positives++
          }
          const model = estimateErrorRate({ ...filter.parameters, items: capacity })
          const [low, high] = chernoffInterval(model * probes)
          console.log(`${name} counting FPR at ${capacity}: measured ${(positives / probes).toExponential(3)}, model ${model.toExponential(3)}`)
          expect(positives).toBeGreaterThanOrEqual(low)
          expect(positives).toBeLessThanOrEqual(high)
          expect(model).toBeLessThan(errorRate * 1.01)
          expect(await filter.hasMany(members)).toEqual(members.map(() => true))
        } finally {
          await filter.close()
        }
      }, 120_000)
    }
  })
}
