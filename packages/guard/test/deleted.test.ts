import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { RedisCountingFilter } from '@bloomkit/redis-backend'
import { CacheGuard, RedisCache, type GuardFilter } from '@bloomkit/guard'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { countingCache } from './support/counting-cache.js'
import { redisClient, uniqueName } from './support/redis.js'
import { ROWS, UsersDb, type User } from './support/users-db.js'

let db: UsersDb
let redis: Redis
const ids = Array.from({ length: ROWS }, (_, i) => String(i + 1))

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
})

/** A guard over the test database with a counted Redis cache, its filter warmed with every row. */
async function setUp(filter: GuardFilter) {
  const cache = countingCache(new RedisCache(redis))
  const guard = new CacheGuard<User>({ filter, cache, name: uniqueName('deleted'), load: db.user, cacheTimeout: 5000 })
  await guard.warm(ids)
  return { guard, cache }
}

describe.each([
  ['a counting memory filter', async () => CountingMemoryFilter.create({ capacity: 10_000, errorRate: 0.001 })],
  ['a counting Redis filter', async () => RedisCountingFilter.create(redis, uniqueName('deleted-filter'), { capacity: 10_000, errorRate: 0.001 })],
])('deleted(id) with %s', (_label, makeFilter) => {
  test('a deleted user stops reaching the cache and the database; every other row still passes the filter', async () => {
    const filter = await makeFilter()
    const { guard, cache } = await setUp(filter)
    // Cached first, so that a guard which only fenced would still have to go past the filter.
    expect(await guard.get('1234')).toEqual({ id: '1234', name: 'user 1234' })
    await db.remove('1234')
    await guard.deleted('1234')
    expect(await filter.has('1234')).toBe(false)
    db.queries = 0
    const before = { ...cache.calls }
    expect(await guard.get('1234')).toBeNull()
    expect(await guard.get('1234')).toBeNull()
    expect(db.queries).toBe(0)
    expect(cache.calls).toEqual(before)
    expect(guard.stats()).toMatchObject({ filtered: 2 })
    // No other row was taken out with it (no false negative), and one of them still loads.
    const others = ids.filter((id) => id !== '1234')
    expect((await filter.hasMany(others)).every(Boolean)).toBe(true)
    expect(await guard.get('77')).toEqual({ id: '77', name: 'user 77' })
    // Re-inserted and announced again, the row is found again.
    await db.insert('1234', 'user 1234 again')
    await guard.created('1234')
    expect(await guard.get('1234')).toEqual({ id: '1234', name: 'user 1234 again' })
    await db.rename('1234', 'user 1234')
    await guard.close()
    if (filter instanceof RedisCountingFilter) await filter.destroy()
  })

  test('a row announced twice stays in the filter after one delete (never a false negative): the database answers, once', async () => {
    const filter = await makeFilter()
    const { guard } = await setUp(filter)
    await guard.created('42') // already warmed: its counters now count it twice
    await db.remove('42')
    await guard.deleted('42')
    expect(await filter.has('42')).toBe(true)
    db.queries = 0
    expect(await guard.get('42')).toBeNull()
    expect(await guard.get('42')).toBeNull()
    expect(db.queries).toBe(1)
    await db.insert('42', 'user 42')
    await guard.close()
    if (filter instanceof RedisCountingFilter) await filter.destroy()
  })
})

test('with a plain filter, deleted(id) fences the cache as invalidate does and the key stays until a rebuild', async () => {
  const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
  const { guard } = await setUp(filter)
  expect(await guard.get('555')).toEqual({ id: '555', name: 'user 555' })
  await db.remove('555')
  await guard.deleted('555')
  expect(filter.has('555')).toBe(true)
  db.queries = 0
  expect(await guard.get('555')).toBeNull()
  expect(await guard.get('555')).toBeNull()
  expect(db.queries).toBe(1)
  await db.insert('555', 'user 555')
  await guard.close()
})
