import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CacheGuard } from '@bloomkit/guard'
import { Cluster } from 'ioredis'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startRedisCluster, type RedisClusterHandle } from '../../../test-support/redis-servers.js'
import { fastFail, uniqueName } from './support/redis.js'
import { ROWS, UsersDb, type User } from './support/users-db.js'

let cluster: RedisClusterHandle
let client: Cluster
let db: UsersDb

beforeAll(async () => {
  ;[cluster, db] = await Promise.all([startRedisCluster(3), UsersDb.create()])
  client = new Cluster([...cluster.nodes], { redisOptions: fastFail, clusterRetryStrategy: (times) => (times > 20 ? null : 100) })
  client.on('error', () => {})
})

afterAll(async () => {
  client?.disconnect()
  await Promise.all([cluster?.stop(), db?.close()])
})

test('over a Redis Cluster: getMany across slots, absent markers, locks, created and invalidate', async () => {
  const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
  filter.addMany(Array.from({ length: ROWS }, (_, i) => String(i + 1)))
  filter.add('fp')
  const guard = new CacheGuard<User>({ filter, cache: client, name: uniqueName('cluster'), load: db.user, cacheTimeout: 5000 })
  const ids = Array.from({ length: 50 }, (_, i) => String(i * 37 + 1)) // keys on every master
  const first = await guard.getMany([...ids, 'fp', 'nope'])
  expect(first).toEqual([...ids.map((id) => ({ id, name: `user ${id}` })), null, null])
  db.queries = 0
  expect(await guard.getMany([...ids, 'fp'])).toEqual(first.slice(0, -1))
  expect(db.queries).toBe(0)
  expect(guard.stats()).toMatchObject({ cacheHits: 50, cachedAbsentHits: 1, cacheErrors: 0, loads: 51 })
  await db.insert('c-new', 'Cluster')
  await guard.created('c-new')
  expect(await guard.get('c-new')).toEqual({ id: 'c-new', name: 'Cluster' })
  await db.rename('1', 'renamed')
  await guard.invalidate('1')
  expect(await guard.get('1')).toEqual({ id: '1', name: 'renamed' })
})
