import { afterAll, expect, test } from 'vitest'
import { LayeredRedisFilter, RedisBloomFilter } from '@bloomkit/redis-backend'
import { errorOf, standaloneClient, uniqueName } from './support/clients.js'

// docs/SPEC.md 9.8, Destroy (issue 33 item 16): every layer the meta names goes, then the meta,
// even when the meta is damaged; a layer that cannot go fails the call and leaves the meta.

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

const minute = 60_000
const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)
/** Every Redis key of the filter `name` (its meta and its layers' keys); test names hold no glob characters. */
const left = async (name: string) => (await redis.keys(`${name}:*`)).sort()

/** A rotating filter with layers in windows 1000 and 1001, keep 2. */
async function twoWindows(name: string) {
  let now = 1_000 * minute
  const filter = await LayeredRedisFilter.create(redis, name, { capacity: 100, errorRate: 0.01, seed: 3, window: { seconds: 60, keep: 2 }, clock: () => now })
  await filter.addMany(keys('a', 50))
  now += minute
  await filter.addMany(keys('b', 50))
  await filter.close()
}

test('a layered meta whose list holds a window past the last one (a damaged meta) is destroyed whole: every layer, then the meta', async () => {
  const name = uniqueName('destroy-damaged')
  await twoWindows(name)
  expect(await left(name)).toContain(`${name}:L2:meta`)
  // What a clock of 1e19 ms once wrote with 1-second windows: a 17-digit window (and a check that no longer matches).
  await redis.hset(`${name}:meta`, 'layers', '1/1000/0/100,2/10000000000000000/0/100')
  expect((await errorOf(LayeredRedisFilter.open(redis, name))).code).toBe('BLOOM_CORRUPT_STORE')
  expect(await LayeredRedisFilter.destroy(redis, name)).toBe(true)
  expect(await left(name)).toEqual([])
  expect(await LayeredRedisFilter.destroy(redis, name)).toBe(false)
})

test('RedisBloomFilter.destroy (what `bloomkit delete` calls) destroys a layered filter, a dropped layer not yet expired included', async () => {
  const name = uniqueName('destroy-layered')
  let now = 2_000 * minute
  const filter = await LayeredRedisFilter.create(redis, name, { capacity: 100, errorRate: 0.01, seed: 4, window: { seconds: 60, keep: 1 }, clock: () => now })
  await filter.addMany(keys('a', 50))
  now += minute
  await filter.addMany(keys('b', 50))
  // Keep 1: window 2000's layer is no longer listed, but its keys live until their TTL.
  expect((await filter.layers()).map((layer) => layer.window)).toEqual([2001])
  expect(await redis.exists(`${name}:L1:meta`)).toBe(1)
  await filter.close()
  expect(await RedisBloomFilter.destroy(redis, name)).toBe(true)
  expect(await left(name)).toEqual([])
})

test('a layer that cannot be destroyed fails the call with its code and leaves the meta; destroying again once it can finishes the job', async () => {
  const name = uniqueName('destroy-stuck')
  await twoWindows(name)
  const format = await redis.hget(`${name}:L1:meta`, 'format')
  await redis.hdel(`${name}:L1:meta`, 'format')
  expect((await errorOf(LayeredRedisFilter.destroy(redis, name))).code).toBe('BLOOM_CORRUPT_STORE')
  expect(await redis.exists(`${name}:meta`)).toBe(1)
  await redis.hset(`${name}:L1:meta`, 'format', String(format))
  expect(await RedisBloomFilter.destroy(redis, name)).toBe(true)
  expect(await left(name)).toEqual([])
})
