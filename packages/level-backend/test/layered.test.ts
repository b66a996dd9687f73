import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { KeyHasher, layeredFormat } from '@bloomkit/core/store'
import { LayeredLevelFilter, LevelBitStore, LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBitStore, MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { tempFolders } from './support/temp-folders.js'

const { decodeLayeredSnapshot } = layeredFormat

const folders = tempFolders()
afterAll(() => folders.removeAll())

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(BloomError)
    return (error as BloomError).code
  }
  return 'resolved'
}

describe('LevelBloomFilter.create with growth (scalable)', () => {
  test('grows in layers inside the one folder, keeps every key across close and open, and exports the layered format', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.01, growth: 2 })
    expect(filter).toBeInstanceOf(LayeredLevelFilter)
    const added = await filter.addMany(keys('k', 1000))
    const layers = await filter.layers()
    expect(layers.map((layer) => layer.capacity)).toEqual([100, 200, 400, 800])
    expect(layers.slice(0, -1).map((layer) => layer.count)).toEqual([100, 200, 400])
    expect(await filter.estimateCount()).toBe(added.filter(Boolean).length)
    expect(await filter.add('k:1')).toBe(false)
    for (const id of [1, 2, 3, 4]) expect(existsSync(join(folder, `L${id}`))).toBe(true)
    await filter.close()

    const again = await LayeredLevelFilter.open(folder)
    expect(await again.layers()).toEqual(layers)
    expect((await again.hasMany(keys('k', 1000))).every(Boolean)).toBe(true)
    const snapshot = await again.export()
    const memory = LayeredMemoryFilter.importSync(snapshot) as LayeredMemoryFilter
    const probes = [...keys('k', 1000), ...keys('absent', 3000)]
    expect(memory.hasMany(probes)).toEqual(await again.hasMany(probes))
    await again.close()

    const copy = await LayeredLevelFilter.import(folders.path(), memory.export())
    expect(await copy.hasMany(probes)).toEqual(memory.hasMany(probes))
    expect(await copy.layers()).toEqual(memory.layers())
    await copy.close()
  })

  test('a crash while adding a layer (its folder made, the manifest not yet written) leaves a filter that opens, with every resolved key', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 50, errorRate: 0.01, growth: 2 })
    await filter.addMany(keys('k', 100)) // layers L1 (50) and L2 (50 of 100)
    await filter.close()
    // What a crash between creating L3's folder and listing it leaves: a LevelDB filter folder the manifest does not know.
    const orphan = await LevelBitStore.create(join(folder, 'L3'), { bits: 4096, hashes: 7, shards: 1, seed: 0 })
    await orphan.close()
    const reopened = await LayeredLevelFilter.open(folder)
    expect(existsSync(join(folder, 'L3'))).toBe(false)
    expect((await reopened.layers()).length).toBe(2)
    expect((await reopened.hasMany(keys('k', 100))).every(Boolean)).toBe(true)
    await reopened.addMany(keys('j', 100)) // grows into a fresh L3
    expect((await reopened.layers()).length).toBe(3)
    expect((await reopened.hasMany([...keys('k', 100), ...keys('j', 100)])).every(Boolean)).toBe(true)
    await reopened.close()
  })

  test('a listed layer that is gone is BLOOM_DATA_LOST; a fixed filter (kind: fixed) refuses a layered folder and the other way round; merge, a string of keys and JSON are refused', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 20, errorRate: 0.01, growth: 2 })
    await filter.addMany(keys('k', 30))
    expect(await codeOf(filter.merge(filter))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(filter.addMany('abc' as never))).toBe('BLOOM_INVALID_PARAMETER')
    expect(await filter.hasMany(['a', 'b', 'c'])).toEqual([false, false, false])
    expect(() => JSON.stringify({ filter })).toThrow(/export\(\)/)
    await filter.close()
    expect(await codeOf(LevelBloomFilter.open(folder, { kind: 'fixed' }))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(LevelBloomFilter.create(folder, { capacity: 20, errorRate: 0.01, growth: 4 }))).toBe('BLOOM_INCOMPATIBLE')
    const fixed = folders.path()
    await (await LevelBloomFilter.create(fixed, { capacity: 20, errorRate: 0.01 })).close()
    expect(await codeOf(LayeredLevelFilter.open(fixed))).toBe('BLOOM_NOT_FOUND')
    const { rmSync } = await import('node:fs')
    rmSync(join(folder, 'L1'), { recursive: true, force: true })
    expect(await codeOf(LayeredLevelFilter.open(folder))).toBe('BLOOM_DATA_LOST')
  })

  prop(
    [
      fc.record({ capacity: fc.integer({ min: 1, max: 15 }), growth: fc.integer({ min: 1, max: 3 }) }),
      fc.array(fc.oneof(fc.array(fc.integer({ min: 0, max: 150 }), { minLength: 1, maxLength: 20 }).map((add) => ({ add })), fc.integer({ min: 0, max: 200 }).map((has) => ({ has })), fc.constant({ reopen: true })), { maxLength: 20 }),
    ],
    { numRuns: 12 },
  )('against a Set: no false negative across layer boundaries and reopens, answers equal the union of its layers', async (options, steps) => {
    const folder = folders.path()
    let filter = await LayeredLevelFilter.create(folder, { ...options, errorRate: 0.05 })
    const model = new Set<string>()
    try {
      for (const step of steps) {
        if ('add' in step) {
          const batch = step.add.map((i) => `k${i}`)
          const answers = await filter.addMany(batch)
          batch.forEach((key, i) => model.has(key) && expect(answers[i]).toBe(false))
          for (const key of batch) model.add(key)
        } else if ('has' in step) {
          const key = `k${step.has}`
          const answer = await filter.has(key)
          if (model.has(key)) expect(answer).toBe(true)
          const layers = decodeLayeredSnapshot(await filter.export()).layers.map(
            (layer) => new MemoryBloomFilter(new MemoryBitStore(layer.parameters, layer.payload.slice()), new KeyHasher(layer.parameters.seed)),
          )
          expect(answer).toBe(layers.some((layer) => layer.has(key)))
        } else {
          await filter.close()
          filter = await LayeredLevelFilter.open(folder)
        }
      }
      expect((await filter.hasMany([...model])).every(Boolean)).toBe(true)
    } finally {
      await filter.close()
    }
  })
})

describe('LevelBloomFilter.create with window (rotating)', () => {
  prop(
    [
      // Few keys, so that re-adds are common (each must be kept keep windows from its own time).
      // Without growth a window's one layer takes every key (9 here at most), so it gets the
      // capacity for them: an overfilled layer's false positives would read as a key kept too long.
      fc.oneof(
        fc.record({ seconds: fc.integer({ min: 1, max: 10 }), keep: fc.integer({ min: 1, max: 4 }), growth: fc.constantFrom(1, 2), capacity: fc.integer({ min: 1, max: 10 }) }),
        fc.record({ seconds: fc.integer({ min: 1, max: 10 }), keep: fc.integer({ min: 1, max: 4 }), growth: fc.constant(undefined), capacity: fc.constant(31) }),
      ),
      fc.array(fc.record({ advance: fc.integer({ min: 0, max: 12_000 }), key: fc.integer({ min: 0, max: 8 }), add: fc.boolean() }), { maxLength: 40 }),
    ],
    { numRuns: 10 },
  )('rotating, against a model of times: found within the guarantee, never after forgetting, for any clock steps', async (window, steps) => {
    let now = 1_700_000_000_000
    const filter = await LayeredLevelFilter.create(folders.path(), { capacity: window.capacity, growth: window.growth, errorRate: 1e-9, window: { seconds: window.seconds, keep: window.keep }, clock: () => now })
    const addedAt = new Map<number, number>()
    try {
      for (const step of steps) {
        now += step.advance
        // Every add counts from its own time, a re-add included (docs/SPEC.md 8: it is written into the current window).
        if (step.add) {
          await filter.add(`k${step.key}`)
          addedAt.set(step.key, now)
        }
        for (const [k, t] of addedAt) {
          const age = now - t
          if (age < (window.keep - 1) * window.seconds * 1000) expect(await filter.has(`k${k}`), `k${k} added ${age} ms ago`).toBe(true)
          if (age >= window.keep * window.seconds * 1000) {
            // At a 1e-9 error rate these few keys give no false positive: true would be a layer kept too long.
            expect(await filter.has(`k${k}`), `k${k} added ${age} ms ago`).toBe(false)
            addedAt.delete(k)
          }
        }
      }
    } finally {
      await filter.close()
    }
  })

  test('a folder reopened by a process whose clock is keep windows behind its newest layer refuses adds (BLOOM_CLOCK_SKEW); one window behind adds into the newest window', async () => {
    const folder = folders.path()
    const minute = 60_000
    const written = await LayeredLevelFilter.create(folder, { capacity: 100, errorRate: 1e-6, seed: 6, window: { seconds: 60, keep: 2 }, clock: () => 3_000 * minute })
    await written.add('w3000')
    await written.close()
    const behind = await LayeredLevelFilter.open(folder, { clock: () => 2_998 * minute })
    const refused = await behind.add('late').then(() => undefined, (error: unknown) => error)
    expect((refused as BloomError).code).toBe('BLOOM_CLOCK_SKEW')
    expect(await behind.has('w3000')).toBe(true)
    await behind.close()
    const oneBehind = await LayeredLevelFilter.open(folder, { clock: () => 2_999 * minute })
    expect(await oneBehind.add('late')).toBe(true)
    expect((await oneBehind.layers()).map((layer) => layer.window)).toEqual([3000])
    await oneBehind.close()
  })

  test('found until t + (keep − 1)·seconds, forgotten after t + keep·seconds; old layers’ folders are deleted', async () => {
    const folder = folders.path()
    mkdirSync(folder, { recursive: true })
    let now = 1_700_000_000_000
    const clock = () => now
    const seen = await LevelBloomFilter.create(folder, { capacity: 100, errorRate: 1e-6, window: { seconds: 60, keep: 2 }, clock })
    const addedAt = now
    expect(await seen.add('e:1')).toBe(true)
    now = addedAt + 60_000 - 1
    expect(await seen.has('e:1')).toBe(true)
    now = addedAt + 60_000 + 5000
    expect(await seen.add('e:2')).toBe(true)
    now = addedAt + 2 * 60_000
    expect(await seen.has('e:1')).toBe(false)
    expect(await seen.has('e:2')).toBe(true)
    expect((await seen.layers()).length).toBe(1)
    expect(existsSync(join(folder, 'L1'))).toBe(false)
    await seen.close()
  })
})
