import { CacheGuard, RedisCache } from '@bloomkit/guard'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { afterAll, expect, test } from 'vitest'
import { redisClient, uniqueName } from '../../packages/guard/test/support/redis.js'

// The guard's read path on this runtime: filter, Redis cache (RedisCache over ioredis), single-flight
// loads. The rows come from a Map: the guard's own tests (packages/guard/test) read a PGlite database,
// which takes longer to start than this whole file runs, and adds nothing that depends on the runtime.
const redis = redisClient()
afterAll(() => redis.disconnect())

interface User {
  id: string
  name: string
}

async function guardOverRows() {
  const rows = new Map(Array.from({ length: 100 }, (_, i) => [String(i), { id: String(i), name: `user ${i}` }]))
  const filter = await MemoryBloomFilter.create({ capacity: 1_000, errorRate: 0.001 })
  filter.addMany(rows.keys())
  const loads: string[] = []
  const name = uniqueName('runtimes')
  const load = async (id: string): Promise<User | null> => {
    loads.push(id)
    await new Promise((resolve) => setTimeout(resolve, 20))
    return rows.get(id) ?? null
  }
  // Generous timeouts: this is about behaviour, and a loaded machine can be slow.
  const guard = new CacheGuard<User>({ filter, cache: new RedisCache(redis), name, load, cacheTimeout: 5000 })
  return { guard, filter, loads, name }
}

test('a key the filter has not seen answers null without a load; a present one loads once, then comes from Redis', async () => {
  const { guard, loads, name } = await guardOverRows()
  expect(await guard.get('nobody')).toBeNull()
  expect(loads).toEqual([])
  expect(await guard.get('7')).toEqual({ id: '7', name: 'user 7' })
  expect(await guard.get('7')).toEqual({ id: '7', name: 'user 7' })
  expect(loads).toEqual(['7'])
  expect(await redis.get(`${name}:7`)).toBe('V{"id":"7","name":"user 7"}')
  expect(guard.stats()).toMatchObject({ requests: 3, filtered: 1, loads: 1, cacheHits: 1 })
})

test('a false positive is loaded once and cached as absent; concurrent gets of one key share one load', async () => {
  const { guard, filter, loads, name } = await guardOverRows()
  filter.add('gone')
  expect(await guard.get('gone')).toBeNull()
  expect(await guard.get('gone')).toBeNull()
  expect(await redis.get(`${name}:gone`)).toBe('N')
  const results = await Promise.all(Array.from({ length: 50 }, () => guard.get('42')))
  for (const user of results) expect(user).toEqual({ id: '42', name: 'user 42' })
  expect(loads).toEqual(['gone', '42'])
})

test('getMany answers in input order', async () => {
  const { guard, loads } = await guardOverRows()
  expect(await guard.getMany(['3', 'nobody', '4', '3'])).toEqual([{ id: '3', name: 'user 3' }, null, { id: '4', name: 'user 4' }, { id: '3', name: 'user 3' }])
  expect(loads.sort()).toEqual(['3', '4'])
})
