import { describe, expect, test } from 'vitest'
import { RedisBloomFilter, RedisCountingFilter, type RedisClient } from '@bloomkit/redis-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { bothDeployments, clusterClient, standaloneClient, uniqueName } from './support/clients.js'

const { redis: standalone, cluster } = bothDeployments()

for (const [topology, client] of [['standalone', standalone], ['Cluster', cluster]] as [string, RedisClient][]) {
  describe(`RedisCountingFilter (${topology})`, () => {
    test('4 clients adding and removing concurrently: no key that is still added ever reads absent', async () => {
      const name = uniqueName('counting-concurrent')
      // Small: 4 800 positions for 400 keys, so the writers' keys share counters all the time.
      const first = await RedisCountingFilter.fromParameters(client, name, { bits: 4800, hashes: 5, shards: 3, seed: 8, layout: 'classic' })
      const clients = Array.from({ length: 4 }, () => (topology === 'standalone' ? standaloneClient() : clusterClient()))
      try {
        const filters = await Promise.all(clients.map((c) => RedisCountingFilter.open(c, name)))
        // Writer w owns keys w:0 … w:99: it keeps w:0 … w:49 added throughout, and adds and
        // removes w:50 … w:99 over and over; after every step the kept keys of all writers must read present.
        const kept = filters.map((_, w) => Array.from({ length: 50 }, (_, i) => `${w}:${i}`))
        await Promise.all(filters.map((filter, w) => filter.addMany(kept[w])))
        const allKept = kept.flat()
        await Promise.all(
          filters.map(async (filter, w) => {
            const churn = Array.from({ length: 50 }, (_, i) => `${w}:${50 + i}`)
            for (let round = 0; round < 15; round++) {
              await filter.addMany(churn)
              await Promise.all(churn.slice(0, 10).map((key) => filter.add(key)))
              expect(await filter.hasMany(allKept)).toEqual(allKept.map(() => true))
              expect(await filter.removeMany(churn)).toEqual(churn.map(() => true))
              await Promise.all(churn.slice(0, 10).map(async (key) => expect(await filter.remove(key)).toBe(true)))
              expect(await filter.hasMany(allKept)).toEqual(allKept.map(() => true))
            }
          }),
        )
        // Every churned key was removed as often as added: the counters are the kept keys' alone.
        const only = await CountingMemoryFilter.fromParameters(first.parameters)
        only.addMany(allKept)
        expect(Buffer.from(await first.export())).toEqual(Buffer.from(only.export()))
      } finally {
        await first.destroy()
        await Promise.all(clients.map((c) => c.quit()))
      }
    }, 120_000)

    test('create(…, { counting: true }) makes one; open and import of each kind refuse the other kind with a coded error', async () => {
      const name = uniqueName('counting-kinds')
      const filter = await RedisBloomFilter.create(client, name, { capacity: 1000, errorRate: 0.01, counting: true })
      try {
        expect(filter).toBeInstanceOf(RedisCountingFilter)
        expect(await filter.add('a')).toBe(true)
        expect(await filter.remove('a')).toBe(true)
        // The front door opens whatever create made; kind: 'fixed' insists on a plain one.
        const opened = await RedisBloomFilter.open(client, name)
        expect(opened).toBeInstanceOf(RedisCountingFilter)
        expect(opened.kind).toBe('counting')
        await expect(RedisBloomFilter.open(client, name, { kind: 'fixed' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/counting filter, not a fixed one/) })
        await expect(RedisBloomFilter.create(client, name, { capacity: 1000, errorRate: 0.01, seed: filter.parameters.seed })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
        // The same call again opens it (every instance of a service may call create at start-up).
        const again = await RedisBloomFilter.create(client, name, { capacity: 1000, errorRate: 0.01, counting: true })
        expect(again.parameters).toEqual(filter.parameters)
        const plainName = uniqueName('plain-kinds')
        const plain = await RedisBloomFilter.create(client, plainName, { capacity: 1000, errorRate: 0.01 })
        await expect(RedisCountingFilter.open(client, plainName)).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/plain filter/) })
        await expect(RedisCountingFilter.import(client, plainName, await filter.export())).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
        const refusedName = uniqueName('x')
        await expect(RedisBloomFilter.import(client, refusedName, await filter.export(), { kind: 'fixed' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/counting filter's \(format version 3\)/) })
        expect(await client.exists(`${refusedName}:meta`)).toBe(0)
        await expect(RedisBloomFilter.open(client, plainName, { kind: 'counting' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/fixed filter, not a counting one \(kind: 'counting' was asked for\)/) })
        await plain.destroy()
        await expect(RedisBloomFilter.create(client, uniqueName('y'), { capacity: 1000, errorRate: 0.01, counting: true, growth: 2 } as never)).rejects.toMatchObject({
          code: 'BLOOM_INVALID_PARAMETER',
          message: expect.stringMatching(/counting.*growth/),
        })
      } finally {
        await filter.destroy()
      }
    })

    test('a counting snapshot moves byte for byte between memory and Redis, and each shard string is 4 bits a position plus the marker', async () => {
      const memory = await CountingMemoryFilter.create({ capacity: 5000, errorRate: 0.01, seed: 3, shards: 2 })
      for (let i = 0; i < 5000; i++) memory.add(`m:${i % 4000}`)
      const snapshot = memory.export()
      const redis = await RedisCountingFilter.import(client, uniqueName('counting-move'), snapshot)
      try {
        expect(Buffer.from(await redis.export())).toEqual(Buffer.from(snapshot))
        expect(await redis.removeMany(['m:1', 'm:2'])).toEqual([true, true])
        memory.removeMany(['m:1', 'm:2'])
        expect(Buffer.from(await redis.export())).toEqual(Buffer.from(memory.export()))
        const [, shard0] = redis.keys
        expect(Number(await client.strlen(shard0))).toBe(redis.parameters.bits / redis.parameters.shards / 2 + 4)
      } finally {
        await redis.destroy()
      }
    })

    test.each([
      // A key's positions repeat (30 hashes on 48 counters) and share bytes.
      ['48 counters, 30 hashes', { bits: 48, hashes: 30, shards: 1, seed: 4, layout: 'classic' as const }, 2_000],
      // More keys per shard than one script takes: the store sends them in order, in several scripts.
      ['blocked, 2 shards', { bits: 8192, hashes: 5, shards: 2, seed: 6, layout: 'blocked' as const }, 9_000],
      // Touched bytes far apart: several reads per script.
      ['sparse, classic', { bits: 4_000_000, hashes: 7, shards: 1, seed: 7, layout: 'classic' as const }, 600],
      // Touched bytes a few apart over 200 KB of counters: runs cut at 64 KiB, each read and written whole.
      ['dense, runs longer than 64 KiB', { bits: 400_000, hashes: 7, shards: 1, seed: 9, layout: 'classic' as const }, 12_000],
    ])('batches of adds and removes leave exactly the memory filter\'s counters (%s)', async (_, parameters, count) => {
      const memory = CountingMemoryFilter.fromParametersSync(parameters)
      const redis = await RedisCountingFilter.fromParameters(client, uniqueName('counting-same'), parameters)
      try {
        // Keys repeat within each batch, so a counter moves several times in one script.
        const keys = Array.from({ length: count }, (_, i) => `s:${(i * 7) % Math.ceil(count / 3)}`)
        expect(await redis.addMany(keys)).toEqual(memory.addMany(keys))
        expect(await redis.addMany(keys.slice(0, count / 2))).toEqual(memory.addMany(keys.slice(0, count / 2)))
        const removed = keys.filter((_, i) => i % 3 !== 0)
        expect(await redis.removeMany(removed)).toEqual(memory.removeMany(removed))
        const probes = [...keys, ...Array.from({ length: 500 }, (_, i) => `absent:${i}`)]
        expect(await redis.hasMany(probes)).toEqual(memory.hasMany(probes))
        expect(await redis.removeMany(probes)).toEqual(memory.removeMany(probes))
        // Buffer.compare: toEqual walks a 2 MB buffer element by element for minutes.
        expect(Buffer.compare(await redis.export(), memory.export())).toBe(0)
      } finally {
        await redis.destroy()
      }
    })

    test('a lost shard is BLOOM_DATA_LOST for add, has and remove, never "absent"', async () => {
      const filter = await RedisCountingFilter.fromParameters(client, uniqueName('counting-lost'), { bits: 1024, hashes: 3, shards: 1, seed: 2, layout: 'blocked' })
      try {
        await filter.add('k')
        await client.del(filter.keys[1])
        for (const call of [() => filter.has('k'), () => filter.remove('k'), () => filter.add('k')]) await expect(call()).rejects.toMatchObject({ code: 'BLOOM_DATA_LOST' })
      } finally {
        await filter.destroy()
      }
    })
  })
}
