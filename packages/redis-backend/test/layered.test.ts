import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { chernoffInterval } from '../../../test-support/chernoff.js'
import { describe, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { KeyHasher, layeredFormat } from '@bloomkit/core/store'
import { MemoryBitStore, MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import { KeyNames } from '../src/layout/key-names.js'
import { bothDeployments, uniqueName } from './support/clients.js'

const { decodeLayeredSnapshot } = layeredFormat

const { redis, cluster } = bothDeployments()

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

describe.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('RedisBloomFilter.create with growth, on %s', (_, client) => {
  test('grows in layers listed in the meta hash, keeps every key, and another process sees the same layers', async () => {
    const name = uniqueName('layered')
    const filter = await RedisBloomFilter.create(client, name, { capacity: 100, errorRate: 0.01, growth: 2 })
    expect(filter).toBeInstanceOf(RedisLayeredFilter)
    const added = await filter.addMany(keys('k', 1000))
    const layers = await filter.layers()
    expect(layers.map((layer) => layer.capacity)).toEqual([100, 200, 400, 800])
    // Counts live in Redis; full layers took exactly their capacity (one process: nothing else in flight).
    expect(layers.slice(0, -1).map((layer) => layer.count)).toEqual([100, 200, 400])
    expect(await filter.estimateCount()).toBe(added.filter(Boolean).length)
    expect((await filter.hasMany(keys('k', 1000))).every(Boolean)).toBe(true)
    expect(await filter.add('k:5')).toBe(false)

    const other = await RedisLayeredFilter.open(client, name)
    expect(await other.layers()).toEqual(layers)
    expect((await other.hasMany(keys('k', 1000))).every(Boolean)).toBe(true)
    // A layer added by one instance is seen by the other's very next check.
    await other.addMany(keys('more', 2000))
    expect((await filter.hasMany(keys('more', 2000))).every(Boolean)).toBe(true)
    expect((await filter.layers()).length).toBe((await other.layers()).length)
    await filter.destroy()
    for (const key of [`${name}:meta`, `${name}:L1:meta`, `${name}:L4:meta`]) expect(await client.exists(key)).toBe(0)
  })

  test('its snapshot is the layered format: the memory backend reads it and answers alike, and it imports back', async () => {
    const name = uniqueName('layered-export')
    const filter = await RedisBloomFilter.create(client, name, { capacity: 50, errorRate: 0.01, growth: 2, seed: 11 })
    await filter.addMany(keys('x', 300))
    const snapshot = await filter.export()
    const memory = LayeredMemoryFilter.importSync(snapshot) as LayeredMemoryFilter
    const probes = [...keys('x', 300), ...keys('y', 2000)]
    expect(memory.hasMany(probes)).toEqual(await filter.hasMany(probes))
    const copy = await RedisLayeredFilter.import(client, `${name}-copy`, memory.export())
    expect(await copy.hasMany(probes)).toEqual(await filter.hasMany(probes))
    expect(await copy.layers()).toEqual(await filter.layers())
    expect(await codeOf(RedisLayeredFilter.import(client, `${name}-copy`, snapshot))).toBe('BLOOM_INCOMPATIBLE')
    await copy.destroy()
    await filter.destroy()
  })
})

describe('layered filters on Redis', () => {
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
    { numRuns: 12 },
  )('rotating, against a model of times: found within the guarantee, never after forgetting, for any clock steps', async (window, steps) => {
    let now = 1_700_000_000_000
    const filter = await RedisBloomFilter.create(redis, uniqueName('rotating-model'), { capacity: window.capacity, growth: window.growth, errorRate: 1e-9, window: { seconds: window.seconds, keep: window.keep }, clock: () => now })
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
      await filter.destroy()
    }
  })

  test.each([
    ['default', {}],
    ['no whole-shard reads', { scanBytesPerKey: 0 }],
    ['every shard read whole', { scanBytesPerKey: 1 << 20 }],
  ] as const)('checks of every batch size answer as the memory union of the layers, blocked and classic layers alike (%s)', async (_, options) => {
    // errorRate 0.01, growth 2, 64x the first capacity: 7 layers, the first blocked, the later (tighter) ones classic.
    const name = uniqueName('check-paths')
    const filter = await RedisBloomFilter.create(redis, name, { capacity: 300, errorRate: 0.01, growth: 2, seed: 5, ...options })
    await filter.addMany(keys('p', 300 * 64))
    const layers = await filter.layers()
    expect(layers.length).toBe(7)
    expect(new Set(layers.map((layer) => layer.parameters.layout))).toEqual(new Set(['blocked', 'classic']))
    const memory = LayeredMemoryFilter.importSync(await filter.export()) as LayeredMemoryFilter
    // Present keys of every layer, absent keys (a few false positives among them), in batches that
    // take each path: single calls and small batches in the one script, larger ones split.
    const probes = [...keys('p', 300 * 64).filter((_, i) => i % 7 === 0), ...keys('a', 3000)]
    for (const size of [1, 64, 65, 1000, 4096]) {
      const batch = probes.slice(0, size)
      expect(await filter.hasMany(batch)).toEqual(memory.hasMany(batch))
    }
    expect(await filter.hasMany(probes)).toEqual(memory.hasMany(probes))
    for (const key of probes.slice(0, 20)) expect(await filter.has(key)).toBe(memory.has(key))
    // Concurrent single calls share their tick's check; a bad key fails only its own call.
    const spread = probes.filter((_, i) => i % 5 === 0)
    expect(await Promise.all(spread.map((key) => filter.has(key)))).toEqual(memory.hasMany(spread))
    const [bad, good] = await Promise.allSettled([filter.has(5 as never), filter.has('p:0')])
    expect(bad.status === 'rejected' && (bad.reason as BloomError).code).toBe('BLOOM_INVALID_KEY')
    expect(good).toEqual({ status: 'fulfilled', value: true })
    await filter.destroy()
  })

  test('a check through the one script still reports a lost classic or blocked shard and an edited layer meta, for single calls and large batches', async () => {
    const name = uniqueName('check-lost')
    const filter = await RedisBloomFilter.create(redis, name, { capacity: 300, errorRate: 0.01, growth: 2 })
    await filter.addMany(keys('p', 300 * 16))
    const layers = await filter.layers()
    const classic = layers.findIndex((layer) => layer.parameters.layout === 'classic') + 1
    expect(classic).toBeGreaterThan(1)
    for (const id of [1, classic]) {
      const other = await RedisLayeredFilter.open(redis, name)
      const shard = new KeyNames(`${name}:L${id}`, 1).shard(0)
      const saved = await redis.getBuffer(shard)
      await redis.del(shard)
      expect(await codeOf(other.has('absent'))).toBe('BLOOM_DATA_LOST')
      expect(await codeOf(other.hasMany(keys('a', 1000)))).toBe('BLOOM_DATA_LOST')
      await redis.set(shard, saved!)
      await redis.hset(`${name}:L${id}:meta`, 'hashes', '31')
      expect(await codeOf(other.has('absent'))).toBe('BLOOM_CORRUPT_STORE')
      expect(await codeOf(other.hasMany(keys('a', 1000)))).toBe('BLOOM_CORRUPT_STORE')
      await redis.hset(`${name}:L${id}:meta`, 'hashes', String(layers[id - 1].parameters.hashes))
      expect((await other.hasMany(keys('p', 300 * 16))).every(Boolean)).toBe(true)
      await other.close()
    }
    await filter.destroy()
  })

  test('racing growers end with one new layer, and no layer takes more than its capacity', async () => {
    const name = uniqueName('racing')
    const a = await RedisBloomFilter.create(redis, name, { capacity: 500, errorRate: 0.01, growth: 2 })
    const b = await RedisLayeredFilter.open(redis, name)
    const c = await RedisLayeredFilter.open(redis, name)
    // Three instances, batches of 100 in flight together.
    const batch = 100
    await Promise.all(
      [a, b, c].map(async (filter, worker) => {
        for (let i = 0; i < 10; i++) await filter.addMany(keys(`w${worker}:${i}`, batch))
      }),
    )
    const layers = await a.layers()
    expect(layers.map((layer) => layer.capacity)).toEqual([500, 1000, 2000].slice(0, layers.length))
    expect(layers.length).toBeLessThanOrEqual(3)
    for (const layer of layers) expect(layer.count).toBeLessThanOrEqual(layer.capacity)
    for (const layer of layers.slice(0, -1)) expect(layer.count).toBeGreaterThanOrEqual(layer.capacity * 0.99)
    const ids = String(await redis.hget(`${name}:meta`, 'layers')).split(',').map((entry) => Number(entry.split('/')[0]))
    expect(ids).toEqual(ids.map((_, i) => i + 1))
    for (let worker = 0; worker < 3; worker++) {
      for (let i = 0; i < 10; i++) expect((await c.hasMany(keys(`w${worker}:${i}`, batch))).every(Boolean)).toBe(true)
    }
    await a.destroy()
  })

  test('losing any layer’s shard is BLOOM_DATA_LOST, and so is losing a listed layer', async () => {
    const name = uniqueName('lost')
    const filter = await RedisBloomFilter.create(redis, name, { capacity: 100, errorRate: 0.01, growth: 2 })
    await filter.addMany(keys('k', 250))
    expect((await filter.layers()).length).toBe(2)
    await redis.del(new KeyNames(`${name}:L1`, 1).shard(0))
    expect(await codeOf(filter.has('absent'))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(filter.add('absent'))).toBe('BLOOM_DATA_LOST')
    await redis.del(`${name}:L1:meta`)
    expect(await codeOf(RedisLayeredFilter.open(redis, name))).toBe('BLOOM_DATA_LOST')
    await filter.destroy()
  })

  test('TTL covers the meta and every layer, new layers included; rebuild leaves one right-sized layer', async () => {
    const name = uniqueName('ttl')
    const filter = await RedisBloomFilter.create(redis, name, { capacity: 100, errorRate: 0.01, growth: 2 })
    await filter.addMany(keys('k', 150))
    await filter.setTtl(100)
    await filter.addMany(keys('j', 400))
    const layers = await filter.layers()
    expect(layers.length).toBe(3)
    for (let id = 1; id <= 3; id++) expect(await redis.ttl(`${name}:L${id}:meta`)).toBeGreaterThan(90)
    expect(await filter.ttl()).toBeGreaterThan(90)

    await filter.rebuild(keys('k', 150))
    const rebuilt = await filter.layers()
    expect(rebuilt.map((layer) => layer.capacity)).toEqual([150])
    // A layer counts new keys: one whose bits earlier keys already set (at most the layer's 1 %) is not.
    expect(rebuilt[0].count).toBeLessThanOrEqual(150)
    expect(rebuilt[0].count).toBeGreaterThanOrEqual(150 - chernoffInterval(150 * 0.01)[1])
    expect((await filter.hasMany(keys('k', 150))).every(Boolean)).toBe(true)
    expect((await filter.hasMany(keys('j', 400))).filter(Boolean).length).toBeLessThan(20)
    expect(await redis.exists(`${name}:L1:meta`)).toBe(0)
    // It grows on from there.
    await filter.addMany(keys('after', 500))
    expect((await filter.layers()).length).toBeGreaterThan(1)
    expect((await filter.hasMany(keys('after', 500))).every(Boolean)).toBe(true)
    await filter.setTtl(null)
    expect(await filter.ttl()).toBe(null)
    await filter.destroy()
  })

  test('rotating windows: found within the guarantee, forgotten after, old layers expire by TTL', async () => {
    const name = uniqueName('rotating')
    let now = Date.now()
    const clock = () => now
    const seen = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 1e-6, window: { seconds: 60, keep: 3 }, clock })
    expect(await seen.add('e:1')).toBe(true)
    const addedAt = now
    const layerTtl = await redis.pttl(`${name}:L1:meta`)
    // Its window ends within 60 s; the layer lives keep windows past it, plus a grace minute.
    expect(layerTtl).toBeGreaterThan(2 * 60_000)
    expect(layerTtl).toBeLessThanOrEqual(4 * 60_000 + 60_000)
    now = addedAt + 2 * 60_000 - 1 // t + (keep − 1)·seconds: still found
    expect(await seen.has('e:1')).toBe(true)
    expect(await seen.add('e:2')).toBe(true)
    now = addedAt + 3 * 60_000 // t + keep·seconds: forgotten
    expect(await seen.has('e:1')).toBe(false)
    expect(await seen.has('e:2')).toBe(true)
    expect((await seen.layers()).map((layer) => layer.window)).toEqual([Math.floor((addedAt + 2 * 60_000 - 1) / 60_000)])
    expect(await codeOf(seen.setTtl(10))).toBe('BLOOM_INCOMPATIBLE')
    await seen.destroy()
  })

  test('a fixed and a layered filter refuse to be opened as each other; merge, a string of keys and JSON are refused', async () => {
    const fixedName = uniqueName('fixed')
    const layeredName = uniqueName('layered')
    const fixed = await RedisBloomFilter.create(redis, fixedName, { capacity: 100, errorRate: 0.01 })
    const layered = await RedisBloomFilter.create(redis, layeredName, { capacity: 100, errorRate: 0.01, growth: 2 })
    expect(await codeOf(RedisBloomFilter.open(redis, layeredName, { kind: 'fixed' }))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(RedisLayeredFilter.open(redis, fixedName))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(RedisBloomFilter.create(redis, layeredName, { capacity: 100, errorRate: 0.01, growth: 4 }))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(layered.merge(layered))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(layered.addMany('abc' as never))).toBe('BLOOM_INVALID_PARAMETER')
    expect(await layered.hasMany(['a', 'b', 'c'])).toEqual([false, false, false])
    expect(() => JSON.stringify({ layered })).toThrow(/export\(\)/)
    expect(() => JSON.stringify({ fixed })).toThrow(/export\(\)/)
    expect(await codeOf(RedisLayeredFilter.import(redis, uniqueName('v1'), await fixed.export()))).toBe('BLOOM_UNSUPPORTED_VERSION')
    await fixed.destroy()
    await layered.destroy()
  })

  prop(
    [
      fc.record({ capacity: fc.integer({ min: 1, max: 20 }), growth: fc.integer({ min: 1, max: 3 }) }),
      fc.array(fc.oneof(fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 30 }).map((add) => ({ add })), fc.integer({ min: 0, max: 300 }).map((has) => ({ has }))), {
        maxLength: 25,
      }),
    ],
    { numRuns: 15 },
  )('against a Set: no false negative across layer boundaries, and answers equal the union of its layers', async (options, steps) => {
    const name = uniqueName('model')
    const filter = await RedisBloomFilter.create(redis, name, { ...options, errorRate: 0.05 })
    const model = new Set<string>()
    try {
      for (const step of steps) {
        if ('add' in step) {
          const batch = step.add.map((i) => `k${i}`)
          const answers = await filter.addMany(batch)
          batch.forEach((key, i) => {
            if (model.has(key)) expect(answers[i]).toBe(false)
          })
          for (const key of batch) model.add(key)
        } else {
          const key = `k${step.has}`
          const answer = await filter.has(key)
          if (model.has(key)) expect(answer).toBe(true)
          const layers = decodeLayeredSnapshot(await filter.export()).layers.map((layer) => {
            return new MemoryBloomFilter(new MemoryBitStore(layer.parameters, layer.payload.slice()), new KeyHasher(layer.parameters.seed))
          })
          expect(answer).toBe(layers.some((layer) => layer.has(key)))
        }
      }
      expect((await filter.hasMany([...model])).every(Boolean)).toBe(true)
    } finally {
      await filter.destroy()
    }
  })
})
