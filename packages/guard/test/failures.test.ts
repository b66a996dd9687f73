import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { startRedisServer } from '../../../test-support/redis-servers.js'
import { CacheGuard, GuardError } from '@bloomkit/guard'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { redisClient, uniqueName } from './support/redis.js'
import { ROWS, UsersDb, type User } from './support/users-db.js'

let db: UsersDb
let redis: Redis

beforeAll(async () => {
  db = await UsersDb.create()
  redis = redisClient()
})

afterAll(async () => {
  redis.disconnect()
  await db.close()
})

beforeEach(() => {
  db.queries = 0
  db.delayMs = 0
  db.failing.clear()
})

async function errorOf(promise: Promise<unknown>): Promise<GuardError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(GuardError)
  return error as GuardError
}

const ids = Array.from({ length: ROWS }, (_, i) => String(i + 1))

describe('no false "not found" (behaviour 2)', () => {
  test('Redis stopped mid-traffic (filter and cache on it): every existing ID still answers its row', async () => {
    const server = await startRedisServer()
    const client = redisClient(server)
    try {
      const filter = await RedisBloomFilter.create(client, uniqueName('filter'), { capacity: 10_000, errorRate: 0.01, timeout: 300 })
      const guard = new CacheGuard<User>({ filter, cache: client, name: uniqueName('down'), load: db.user, filterTimeout: 300, cacheTimeout: 100, lockWait: 200 })
      await guard.warm(ids)
      const wrong: string[] = []
      let answered = 0
      let stop = false
      // Four clients ask for existing and absent IDs in a loop while the server dies and comes back.
      const traffic = Array.from({ length: 4 }, async (_, worker) => {
        for (let i = worker; !stop; i += 4) {
          const id = i % 3 === 0 ? `absent-${i}` : String(1 + ((i * 7919) % ROWS))
          const user = await guard.get(id)
          answered++
          const expected = id.startsWith('absent') ? null : `user ${id}`
          if ((user?.name ?? null) !== expected) wrong.push(`${id} → ${JSON.stringify(user)}`)
        }
      })
      const until = async (n: number) => {
        while (answered < n) await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await until(200)
      await server.kill()
      const atKill = answered
      await until(atKill + 200)
      const restarted = await startRedisServer({ port: server.port })
      await until(answered + 200) // the filter's bits are gone: BLOOM_DATA_LOST, still a fallback
      stop = true
      await Promise.all(traffic)
      await restarted.stop()
      expect(wrong).toEqual([])
      const stats = guard.stats()
      expect(stats.filterErrors).toBeGreaterThan(0)
      expect(stats.cacheErrors).toBeGreaterThan(0)
      expect(stats.loadErrors).toBe(0)
      expect(stats.loads).toBeGreaterThan(100) // while Redis was away the database answered
    } finally {
      client.disconnect()
      await server.stop()
    }
  })

  test("onFilterError 'reject' rejects with GUARD_FILTER_UNAVAILABLE instead of reaching the database", async () => {
    const server = await startRedisServer()
    const client = redisClient(server)
    try {
      const filter = await RedisBloomFilter.create(client, uniqueName('filter'), { capacity: 1000, errorRate: 0.01, timeout: 200 })
      const guard = new CacheGuard<User>({ filter, name: uniqueName('reject'), load: db.user, onFilterError: 'reject', filterTimeout: 200 })
      await guard.warm(['1'])
      expect(await guard.get('1')).toEqual({ id: '1', name: 'user 1' })
      await server.kill()
      db.queries = 0
      const error = await errorOf(guard.get('1'))
      expect(error.code).toBe('GUARD_FILTER_UNAVAILABLE')
      expect(error.cause).toBeDefined()
      expect((await errorOf(guard.getMany(['1', '2']))).code).toBe('GUARD_FILTER_UNAVAILABLE')
      expect(db.queries).toBe(0)
      expect(guard.stats().filterErrors).toBe(2)
    } finally {
      client.disconnect()
      await server.stop()
    }
  })

  test('a filter and a cache that hang (CLIENT PAUSE) time out once, are skipped for the cooldown, and the database answers', async () => {
    // A server of its own: CLIENT PAUSE ALL would stall every other guard test file running meanwhile.
    const server = await startRedisServer()
    const client = redisClient(server)
    const admin = redisClient(server)
    try {
      const filter = await RedisBloomFilter.create(client, uniqueName('filter'), { capacity: 1000, errorRate: 0.01 })
      const guard = new CacheGuard<User>({ filter, cache: client, name: uniqueName('paused'), load: db.user, filterTimeout: 100, cacheTimeout: 100, lockWait: 0 })
      await guard.warm(['5'])
      await admin.call('CLIENT', 'PAUSE', '2000', 'ALL')
      expect(await guard.get('5')).toEqual({ id: '5', name: 'user 5' })
      expect(await guard.get('absent')).toBeNull() // the database said so, not the error
      expect(guard.stats()).toMatchObject({ filterErrors: 2, loads: 2, loadErrors: 0 })
      expect(guard.stats().cacheErrors).toBeGreaterThanOrEqual(2)
    } finally {
      await admin.call('CLIENT', 'UNPAUSE')
      client.disconnect()
      admin.disconnect()
      await server.stop()
    }
  })

  test('a load that throws rejects every waiting get with the id, caches nothing, and the next get loads again', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
    filter.addMany(ids)
    const name = uniqueName('throws')
    const guard = new CacheGuard<User>({ filter, cache: redis, name, load: db.user, cacheTimeout: 5000 })
    db.failing.add('13')
    db.delayMs = 30
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => guard.get('13')))
    expect(db.queries).toBe(1)
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected')
      const error = (outcome as PromiseRejectedResult).reason as GuardError
      expect(error).toBeInstanceOf(GuardError)
      expect(error.code).toBe('GUARD_LOAD_FAILED')
      expect(error.id).toBe('13')
      expect(error.message).toMatch(/load\("13"\) failed: connection reset while reading user 13/)
      expect((error.cause as Error).message).toMatch(/connection reset/)
    }
    expect(await redis.exists(`${name}:13`, `${name}!:13`)).toBe(0) // no value, no marker, no lock left
    db.failing.clear()
    expect(await guard.get('13')).toEqual({ id: '13', name: 'user 13' })
    expect(guard.stats()).toMatchObject({ loads: 2, loadErrors: 1, lockTimeouts: 0 })
  })

  test('with the cache down, gets go to the database; created and invalidate reject so the caller retries', async () => {
    const server = await startRedisServer()
    const client = redisClient(server)
    const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
    filter.addMany(ids)
    const guard = new CacheGuard<User>({ filter, cache: client, name: uniqueName('cachedown'), load: db.user, cacheTimeout: 100 })
    await server.kill()
    try {
      expect(await guard.getMany(['1', '2', 'nope'])).toEqual([{ id: '1', name: 'user 1' }, { id: '2', name: 'user 2' }, null])
      expect(db.queries).toBe(2)
      const error = await errorOf(guard.invalidate('1'))
      expect(error.code).toBe('GUARD_CACHE_UNAVAILABLE')
      expect(error.id).toBe('1')
      expect((await errorOf(guard.created('x'))).code).toBe('GUARD_CACHE_UNAVAILABLE')
      expect(filter.has('x')).toBe(true) // the filter part is done; calling again is safe
    } finally {
      client.disconnect()
      await server.stop()
    }
  })
})

describe('cross-process lock (behaviour 3)', () => {
  test('a lock left by a dead holder expires after lockTtl and the waiter loads', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
    filter.addMany(ids)
    const name = uniqueName('deadlock')
    const guard = new CacheGuard<User>({ filter, cache: redis, name, load: db.user, lockWait: 2000, cacheTimeout: 5000 })
    await redis.set(`${name}!:21`, 'a-process-that-died', 'PX', 300) // as a killed holder leaves it
    const started = Date.now()
    expect(await guard.get('21')).toEqual({ id: '21', name: 'user 21' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    expect(guard.stats()).toMatchObject({ loads: 1, lockTimeouts: 0 })
  })

  test('a waiter whose lockWait runs out loads itself and says so in stats', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
    filter.addMany(ids)
    const name = uniqueName('waitout')
    const guard = new CacheGuard<User>({ filter, cache: redis, name, load: db.user, lockWait: 100, cacheTimeout: 5000 })
    await redis.set(`${name}!:22`, 'a-slow-holder', 'PX', 5000)
    expect(await guard.get('22')).toEqual({ id: '22', name: 'user 22' })
    expect(guard.stats()).toMatchObject({ loads: 1, lockTimeouts: 1 })
  })
})
