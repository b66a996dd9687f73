import { afterAll, expect, test } from 'vitest'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import { layeredCheck } from '../src/layered/layered-meta.js'
import { standaloneClient, uniqueName } from './support/clients.js'

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

test.each([
  ['an unknown policy with growth ≥ 1 (read as scalable before)', 'sliding'],
  ['no policy at all', undefined],
])('a layered meta with %s is refused with BLOOM_UNSUPPORTED_VERSION by open and by create', async (_, policy) => {
  const name = uniqueName('policy')
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 10, errorRate: 0.01, growth: 2, seed: 3 })
  await filter.add('kept')
  expect(await redis.hget(`${name}:meta`, 'policy')).toBe('scalable')
  if (policy === undefined) await redis.hdel(`${name}:meta`, 'policy')
  else await redis.hset(`${name}:meta`, 'policy', policy)
  // As a later release would write it: with a check that matches (a stale one is damage, checked first: BLOOM_CORRUPT_STORE).
  await redis.hset(`${name}:meta`, 'check', layeredCheck(await redis.hgetall(`${name}:meta`)))
  const refused = { code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringContaining(policy === undefined ? 'undefined' : `"${policy}"`) }
  await expect(RedisLayeredFilter.open(redis, name)).rejects.toMatchObject(refused)
  await expect(RedisBloomFilter.create(redis, name, { capacity: 10, errorRate: 0.01, growth: 2, seed: 3 })).rejects.toMatchObject(refused)
  await redis.hset(`${name}:meta`, 'policy', 'scalable')
  await redis.hset(`${name}:meta`, 'check', layeredCheck(await redis.hgetall(`${name}:meta`)))
  await RedisLayeredFilter.destroy(redis, name)
})
