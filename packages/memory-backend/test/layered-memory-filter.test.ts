import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { readFileSync } from 'node:fs'
import { describe, expect, test as plainTest } from 'vitest'
import { BloomError, estimateErrorRate, type BloomKey } from '@bloomkit/core'
import { crc32, layeredFormat, snapshotFormat } from '@bloomkit/core/store'
// Not for backends, so not in @bloomkit/core/store: the test reads core's own rule.
import { compoundErrorRate } from '../../core/src/layered/layer-policy.js'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { chernoffInterval } from '../../../test-support/chernoff.js'

const { decodeLayeredSnapshot } = layeredFormat
const { encodeSnapshotHeader } = snapshotFormat

const code = (c: string) => expect.objectContaining({ code: c })

const keys = fc.oneof(fc.string({ maxLength: 12 }), fc.uint8Array({ maxLength: 12 }), fc.integer({ min: 0, max: 400 }).map((i) => `k:${i}`))

/**
 * The layers of an exported layered filter, each read back as a fixed memory filter from a
 * version-1 snapshot of its bits: a check of the union that does not go through the layered code.
 */
function layersOf(filter: LayeredMemoryFilter): MemoryBloomFilter[] {
  return decodeLayeredSnapshot(filter.export()).layers.map(({ parameters, payload }) => {
    const header = encodeSnapshotHeader({ parameters, items: 0 })
    const snapshot = new Uint8Array(header.length + payload.length + 4)
    snapshot.set(header)
    snapshot.set(payload, header.length)
    new DataView(snapshot.buffer).setUint32(header.length + payload.length, crc32(payload), true)
    return MemoryBloomFilter.importSync(snapshot)
  })
}

describe('LayeredMemoryFilter.create with growth (scalable)', () => {
  plainTest('grows past its capacity in layers growth× larger, and keeps every key', async () => {
    const filter = await LayeredMemoryFilter.create({ capacity: 1000, errorRate: 0.01, growth: 2 })
    expect(filter).toBeInstanceOf(LayeredMemoryFilter)
    const added = filter.addMany(Array.from({ length: 10_000 }, (_, i) => `user:${i}`))
    expect(filter.layers().map((layer) => layer.capacity)).toEqual([1000, 2000, 4000, 8000])
    expect(filter.layers().map((layer) => layer.errorRate)).toEqual([0.005, 0.0025, 0.00125, 0.000625])
    // Every layer but the newest took exactly its capacity of new keys.
    expect(filter.layers().slice(0, -1).map((layer) => layer.count)).toEqual([1000, 2000, 4000])
    expect(filter.estimateCount()).toBe(added.filter(Boolean).length)
    expect(filter.hasMany(Array.from({ length: 10_000 }, (_, i) => `user:${i}`)).every(Boolean)).toBe(true)
    expect(filter.add('user:1')).toBe(false)
    expect(filter.byteLength).toBe(filter.layers().reduce((sum, layer) => sum + layer.parameters.bits / 8, 0))
  })

  plainTest('add of a key any layer holds answers false and writes nothing', async () => {
    const filter = await LayeredMemoryFilter.create({ capacity: 2, errorRate: 0.01, growth: 2, seed: 3 })
    filter.addMany(['a', 'b', 'c'])
    expect(filter.layers().length).toBe(2)
    const before = filter.export()
    expect(filter.add('a')).toBe(false)
    expect(filter.export()).toEqual(before)
  })

  plainTest('every layer shares the seed and derives its positions from the one hash pair', async () => {
    const filter = await LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 4, seed: 99 })
    filter.addMany(Array.from({ length: 100 }, (_, i) => `k${i}`))
    const layers = decodeLayeredSnapshot(filter.export()).layers
    expect(new Set(layers.map((layer) => layer.parameters.seed))).toEqual(new Set([99]))
    // A key added to layer i is found by a fixed filter with layer i's parameters and bits.
    const fixed = layersOf(filter)
    for (let i = 0; i < 100; i++) expect(fixed.some((layer) => layer.has(`k${i}`))).toBe(true)
  })

  prop(
    [
      fc.record({ capacity: fc.integer({ min: 1, max: 20 }), growth: fc.integer({ min: 1, max: 4 }), seed: fc.integer({ min: 0, max: 0xffffffff }), layout: fc.constantFrom('blocked' as const, 'classic' as const, undefined) }),
      fc.array(fc.oneof(keys.map((key) => ({ add: key })), keys.map((key) => ({ has: key })), fc.constant({ roundTrip: true })), { maxLength: 120 }),
    ],
    { numRuns: 120 },
  )('against a Set: no false negative across layer boundaries, re-adds answer false, and it answers as the union of its layers', (options, steps) => {
    let filter = LayeredMemoryFilter.createSync({ ...options, errorRate: 0.05 })
    const model = new Set<string>()
    const id = (key: BloomKey) => (typeof key === 'string' ? `s${key}` : `b${Buffer.from(key).toString('hex')}`)
    for (const step of steps) {
      if ('add' in step) {
        const wasNew = filter.add(step.add)
        if (model.has(id(step.add))) expect(wasNew).toBe(false)
        model.add(id(step.add))
        expect(filter.has(step.add)).toBe(true)
      } else if ('has' in step) {
        const answer = filter.has(step.has)
        if (model.has(id(step.has))) expect(answer).toBe(true)
        expect(answer).toBe(layersOf(filter).some((layer) => layer.has(step.has)))
      } else {
        const snapshot = filter.export()
        filter.close()
        filter = LayeredMemoryFilter.importSync(snapshot) as LayeredMemoryFilter
        expect(filter.export()).toEqual(snapshot)
      }
    }
    for (const layer of filter.layers().slice(0, -1)) expect(layer.count).toBe(layer.capacity)
  })
})

plainTest('layers() reports each layer’s expected false-positive rate at its capacity for its actual parameters, at most the rate it is sized for', async () => {
  const filter = await LayeredMemoryFilter.create({ capacity: 1, errorRate: 1e-3, growth: 2, seed: 5 })
  filter.addMany(Array.from({ length: 40 }, (_, i) => `k:${i}`))
  const layers = filter.layers()
  expect(layers.length).toBeGreaterThan(3)
  for (const layer of layers) {
    expect(layer.expectedErrorRate).toBe(estimateErrorRate({ ...layer.parameters, items: layer.capacity }))
    expect(layer.expectedErrorRate).toBeLessThanOrEqual(layer.errorRate)
  }
})

describe('LayeredMemoryFilter.create with window (rotating)', () => {
  const at = { now: 0 }
  const clock = () => at.now

  plainTest('a key added at t is found until t + (keep − 1)·seconds at least, and gone after t + keep·seconds', async () => {
    const filter = await LayeredMemoryFilter.create({ capacity: 1000, errorRate: 1e-6, window: { seconds: 60, keep: 3 }, clock })
    at.now = 125_000 // 2 min 5 s: window 2
    filter.add('session:1')
    for (const seconds of [125, 179, 180, 240, 245, 299.999]) {
      at.now = seconds * 1000
      expect(filter.has('session:1'), `at ${seconds} s`).toBe(true)
    }
    at.now = 300_000 // window 5: windows 3, 4, 5 are kept
    expect(filter.has('session:1')).toBe(false)
    expect(filter.layers()).toEqual([])
  })

  prop(
    [
      // Few keys, so that re-adds are common (each must be kept keep windows from its own time).
      // Without growth a window's one layer takes every key (13 here at most), so it gets the
      // capacity for them: an overfilled layer's false positives would read as a key kept too long.
      fc.oneof(
        fc.record({ seconds: fc.integer({ min: 1, max: 10 }), keep: fc.integer({ min: 1, max: 4 }), growth: fc.constantFrom(1, 2), capacity: fc.integer({ min: 1, max: 10 }) }),
        fc.record({ seconds: fc.integer({ min: 1, max: 10 }), keep: fc.integer({ min: 1, max: 4 }), growth: fc.constant(undefined), capacity: fc.constant(61) }),
      ),
      fc.array(fc.record({ advance: fc.integer({ min: 0, max: 12_000 }), key: fc.integer({ min: 0, max: 12 }), add: fc.boolean() }), { maxLength: 80 }),
    ],
    { numRuns: 100 },
  )('against a model of times: found within the guarantee, never found after forgetting, for any clock steps', (window, steps) => {
    let now = 1_700_000_000_000
    const filter = LayeredMemoryFilter.createSync({ capacity: window.capacity, growth: window.growth, errorRate: 1e-9, seed: 1, window: { seconds: window.seconds, keep: window.keep }, clock: () => now })
    const addedAt = new Map<number, number>()
    const windowOf = (t: number) => Math.floor(t / (window.seconds * 1000))
    for (const step of steps) {
      now += step.advance
      const key = `k${step.key}`
      if (step.add) {
        // Every add counts from its own time, a re-add included (docs/SPEC.md 8: it is written into the current window).
        filter.add(key)
        addedAt.set(step.key, now)
      }
      const live = layersOf(filter)
      const windows = filter.layers().map((layer) => layer.window)
      for (const [k, t] of addedAt) {
        const age = now - t
        if (age < (window.keep - 1) * window.seconds * 1000) expect(filter.has(`k${k}`), `k${k} added ${age} ms ago`).toBe(true)
        if (age >= window.keep * window.seconds * 1000) {
          // Forgotten by construction, whatever the error rate: the layer the key went into (its
          // window's) is gone, every live layer is of a later window, and the filter answers for the
          // key exactly what its live layers hold (a false positive there is not a layer kept too long).
          expect(windows.every((w) => w > windowOf(t)), `k${k} added ${age} ms ago (window ${windowOf(t)}), live windows ${windows.join(', ')}`).toBe(true)
          expect(filter.has(`k${k}`), `k${k} added ${age} ms ago`).toBe(live.some((layer) => layer.has(`k${k}`)))
          addedAt.delete(k)
        }
      }
    }
  })

  plainTest('windows may take more keys than capacity with growth, layers tagged by window', async () => {
    at.now = 10_000
    const filter = await LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 2, window: { seconds: 1, keep: 2 }, clock })
    filter.addMany(Array.from({ length: 35 }, (_, i) => `a${i}`))
    at.now = 11_000
    filter.addMany(Array.from({ length: 5 }, (_, i) => `b${i}`))
    expect(filter.layers().map((layer) => [layer.window, layer.capacity])).toEqual([
      [10, 10],
      [10, 20],
      [10, 40],
      [11, 10],
    ])
    // Each window's budget is errorRate / keep, split as a scalable filter splits it.
    expect(filter.layers().map((layer) => layer.errorRate)).toEqual([0.0025, 0.00125, 0.000625, 0.0025])
    const copy = LayeredMemoryFilter.importSync(filter.export(), { clock }) as LayeredMemoryFilter
    expect(copy.layers()).toEqual(filter.layers())
    at.now = 12_000
    expect(filter.layers().map((layer) => layer.window)).toEqual([11])
  })
})

describe('the compound false-positive rate stays below errorRate as the filter grows (fixed corpora, Chernoff bounds)', () => {
  describe.each([1, 2, 4])('growth %i', (growth) => {
    plainTest.each([10, 100])('at %i× the first capacity', async (times) => {
      const capacity = 1000
      const errorRate = 0.01
      const probes = 400_000
      const filter = await LayeredMemoryFilter.create({ capacity, errorRate, growth, seed: 2024 })
      for (let i = 0; i < capacity * times; i++) filter.add(`m:${i}`)
      let positives = 0
      for (let i = 0; i < probes; i++) if (filter.has(`p:${i}`)) positives++
      const layers = filter.layers()
      // The model: each layer's expected rate at the keys it holds, combined as independent layers.
      const model = compoundErrorRate(layers.map((layer) => estimateErrorRate({ ...layer.parameters, items: layer.count })))
      const [low, high] = chernoffInterval(model * probes)
      const [, bound] = chernoffInterval(errorRate * probes)
      console.log(
        `growth ${growth}, ${times}×: ${layers.length} layers, measured ${(positives / probes).toExponential(3)}, model ${model.toExponential(3)} ` +
          `allowed [${(low / probes).toExponential(3)}, ${(high / probes).toExponential(3)}], errorRate ${errorRate}`,
      )
      expect(model).toBeLessThan(errorRate)
      expect(positives).toBeGreaterThanOrEqual(low)
      expect(positives).toBeLessThanOrEqual(high)
      // The claim itself: what was measured is consistent with a true rate at or below errorRate.
      expect(positives).toBeLessThanOrEqual(bound)
      // The sizing: each layer meets its share at capacity, and the shares sum below errorRate.
      for (const layer of layers) expect(estimateErrorRate({ ...layer.parameters, items: layer.capacity })).toBeLessThanOrEqual(layer.errorRate)
      expect(layers.reduce((sum, layer) => sum + layer.errorRate, 0)).toBeLessThan(errorRate)
    }, 120_000)
  })
})

describe('errors and edges', () => {
  plainTest('bad options name the option and its range', async () => {
    await expect(LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 0 })).rejects.toThrowError(/growth must be an integer from 1 to 65536; got 0/)
    await expect(LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 1.5 })).rejects.toThrowError(code('BLOOM_INVALID_PARAMETER'))
    await expect(LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 2, tightening: 1 })).rejects.toThrowError(/tightening must be a number greater than 0 and less than 1/)
    await expect(LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, window: { seconds: 0, keep: 2 } })).rejects.toThrowError(/window.seconds must be an integer from 1/)
    await expect(LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, window: { seconds: 5, keep: 0 } })).rejects.toThrowError(/window.keep must be an integer from 1 to 65536/)
    await expect(LayeredMemoryFilter.create({ capacity: 10, errorRate: 2, growth: 2 })).rejects.toThrowError(/errorRate must be/)
    await expect(LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, window: { seconds: 5, keep: 2 }, clock: () => -1 })).rejects.toThrowError(/clock\(\) must be milliseconds/)
  })

  plainTest('without growth or window, create gives the fixed filter exactly as before', async () => {
    const fixed = await MemoryBloomFilter.create({ capacity: 10, errorRate: 0.01 })
    expect(fixed).toBeInstanceOf(MemoryBloomFilter)
  })

  plainTest('merge of layered filters is refused with a clear error', async () => {
    const a = await LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 2 })
    const b = await LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 2 })
    expect(() => a.merge(b)).toThrowError(code('BLOOM_INCOMPATIBLE'))
    expect(() => a.merge(b)).toThrowError(/layered filters cannot be merged/)
  })

  plainTest('a fixed filter refuses a layered snapshot, naming the entry that reads it; the layered entry reads both', async () => {
    const layered = await LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 2 })
    layered.add('a')
    const fixed = await MemoryBloomFilter.create({ capacity: 10, errorRate: 0.01 })
    fixed.add('b')
    await expect(MemoryBloomFilter.import(layered.export())).rejects.toThrowError(code('BLOOM_UNSUPPORTED_VERSION'))
    await expect(MemoryBloomFilter.import(layered.export())).rejects.toThrowError(/a layered filter .*LayeredMemoryFilter\.import from '@bloomkit\/memory-backend\/layered'/)
    const both = [await LayeredMemoryFilter.import(fixed.export()), LayeredMemoryFilter.importSync(layered.export())]
    expect(both.map((filter) => filter.kind)).toEqual(['fixed', 'layered'])
    expect(both[0]).toBeInstanceOf(MemoryBloomFilter)
    expect(both.map((filter) => [filter.has('a'), filter.has('b')])).toEqual([[false, true], [true, false]])
  })

  plainTest('MemoryBloomFilter.create refuses growth and window, naming the layered entry', async () => {
    const layered = { capacity: 10, errorRate: 0.01, growth: 2 } as Parameters<typeof MemoryBloomFilter.create>[0]
    await expect(MemoryBloomFilter.create(layered)).rejects.toThrowError(code('BLOOM_INVALID_PARAMETER'))
    await expect(MemoryBloomFilter.create(layered)).rejects.toThrowError(/LayeredMemoryFilter\.create from '@bloomkit\/memory-backend\/layered'/)
  })

  plainTest('a corrupt layered snapshot is refused before anything is built', async () => {
    const filter = await LayeredMemoryFilter.create({ capacity: 4, errorRate: 0.01, growth: 2 })
    filter.addMany(['a', 'b', 'c', 'd', 'e', 'f'])
    const snapshot = filter.export()
    for (const at of [10, 70, 100, snapshot.length - 2]) {
      const bad = snapshot.slice()
      bad[at] ^= 1
      expect(() => LayeredMemoryFilter.importSync(bad), `byte ${at}`).toThrowError(code('BLOOM_CORRUPT_SNAPSHOT'))
    }
    expect(() => LayeredMemoryFilter.importSync(snapshot.subarray(0, snapshot.length - 1))).toThrowError(code('BLOOM_CORRUPT_SNAPSHOT'))
    const longer = new Uint8Array(snapshot.length + 1)
    longer.set(snapshot)
    expect(() => LayeredMemoryFilter.importSync(longer)).toThrowError(code('BLOOM_CORRUPT_SNAPSHOT'))
  })

  plainTest('close is idempotent and later calls throw BLOOM_CLOSED; clear starts over', async () => {
    const filter = await LayeredMemoryFilter.create({ capacity: 2, errorRate: 0.01, growth: 2 })
    filter.addMany(['a', 'b', 'c'])
    filter.clear()
    expect(filter.layers().map((layer) => layer.count)).toEqual([0])
    expect(filter.has('a')).toBe(false)
    filter.close()
    filter.close()
    expect(() => filter.has('a')).toThrowError(code('BLOOM_CLOSED'))
    expect(() => filter.add('a')).toThrowError(BloomError)
  })

  plainTest('the error rate of a layered filter is the compound of its layers’ rates', async () => {
    const filter = await LayeredMemoryFilter.create({ capacity: 100, errorRate: 0.01, growth: 2 })
    filter.addMany(Array.from({ length: 500 }, (_, i) => `x${i}`))
    expect(filter.errorRate()).toBeGreaterThan(0)
    expect(filter.errorRate()).toBeLessThan(0.01)
  })
})

describe('docs/SPEC.md layered vectors', () => {
  const spec = readFileSync(new URL('../../../docs/SPEC.md', import.meta.url), 'utf8')
  const block = (tag: string) => spec.match(new RegExp('```' + tag + '\\n([\\s\\S]*?)\\n```'))![1].trim()

  plainTest('the scalable vector imports, answers the spec’s keys and exports the same bytes; a new filter writes its layer 0 and sizes layer 1 by this release’s rule', async () => {
    const vector = Buffer.from(block('hex layered scalable'), 'hex')
    const keys = ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
    const imported = await LayeredMemoryFilter.import(vector)
    expect(imported.hasMany(keys)).toEqual(keys.map(() => true))
    expect(Buffer.from(imported.export()).toString('hex')).toBe(block('hex layered scalable'))

    // The vector's layer 1 has the earlier release's 32 bits (SPEC 8.2); this release sizes it at 40.
    const filter = await LayeredMemoryFilter.create({ capacity: 2, errorRate: 0.1, growth: 2, seed: 7, layout: 'classic' })
    filter.addMany(keys)
    const written = decodeLayeredSnapshot(filter.export()).layers
    const read = decodeLayeredSnapshot(vector).layers
    expect(Buffer.from(written[0].payload).toString('hex')).toBe(Buffer.from(read[0].payload).toString('hex'))
    expect(written[0].parameters).toEqual(read[0].parameters)
    expect(written[1].parameters).toEqual({ ...read[1].parameters, bits: 40 })
    expect(written.map((layer) => layer.count)).toEqual(read.map((layer) => layer.count))
  })

  plainTest('the rotating vector is what this backend exports for the spec’s keys and times', async () => {
    let now = 120_000
    const filter = await LayeredMemoryFilter.create({ capacity: 4, errorRate: 0.1, window: { seconds: 60, keep: 2 }, seed: 7, layout: 'blocked', clock: () => now })
    filter.addMany(['alpha', 'beta'])
    now = 180_000
    filter.addMany(['gamma'])
    expect(Buffer.from(filter.export()).toString('hex')).toBe(block('hex layered rotating'))
  })
})
