import { expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { storeOf } from '../src/redis-bloom-filter.js'
import { bothDeployments, errorOf, namesOf, PATHS, uniqueName } from './support/clients.js'

const { redis, cluster } = bothDeployments()

test.each(
  [redis, cluster].flatMap((client) => PATHS.map(([path, options]) => [client === redis ? 'standalone' : 'Cluster', path, client, options] as const)),
)('a deleted shard raises BLOOM_DATA_LOST on has, hasMany, add and estimateCount, never "absent" (%s, %s)', async (_, _path, client, options) => {
  const filter = await RedisBloomFilter.create(client, uniqueName('lost'), { capacity: 10_000, errorRate: 0.01, shards: 4, ...options })
  const keys = Array.from({ length: 2000 }, (_, i) => `k:${i}`)
  await filter.addMany(keys)
  const lostShard = 2
  await client.del(namesOf(filter).shard(lostShard))
  // Every call that touches the lost shard fails; a call that does not still answers.
  const lost = (await errorOf(filter.hasMany(keys)))
  expect(lost.code).toBe('BLOOM_DATA_LOST')
  expect(lost.message).toMatch(/rebuild/)
  const answers = await Promise.allSettled(keys.slice(0, 200).map((key) => filter.has(key)))
  expect(answers.every((a) => a.status === 'rejected' || a.value === true)).toBe(true)
  expect((await errorOf(filter.add('new key'.repeat(3)).then(() => filter.addMany(keys)))).code).toBe('BLOOM_DATA_LOST')
  expect((await errorOf(filter.estimateCount())).code).toBe('BLOOM_DATA_LOST')
  expect((await errorOf(filter.export())).code).toBe('BLOOM_DATA_LOST')
  // The failed add re-created the key without a marker; that debris was removed again.
  expect(await client.exists(namesOf(filter).shard(lostShard))).toBe(0)
  // The documented way out: rebuild from the source of truth.
  await filter.rebuild(keys)
  expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
  await filter.destroy()
})

test('a shard overwritten by another filter of the same name (a stale instance) raises BLOOM_DATA_LOST', async () => {
  const name = uniqueName('stale')
  const old = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, shards: 1 })
  await old.add('a')
  await RedisBloomFilter.destroy(redis, name)
  const fresh = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, shards: 1 })
  expect(fresh.epoch).not.toBe(old.epoch)
  expect((await errorOf(old.has('a'))).code).toBe('BLOOM_DATA_LOST')
  expect(await fresh.has('a')).toBe(false)
  await fresh.destroy()
})

test('a shard key truncated by hand (marker gone) raises BLOOM_DATA_LOST', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('truncated'), { capacity: 1000, errorRate: 0.01, shards: 1 })
  await redis.set(namesOf(filter).shard(0), 'x')
  expect((await errorOf(filter.has('a'))).code).toBe('BLOOM_DATA_LOST')
  expect((await errorOf(storeOf(filter).readShard(0, 0, 8))).code).toBe("BLOOM_DATA_LOST")
})
