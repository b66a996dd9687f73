import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { CacheGuard, GuardError, openGuardFilter, RedisCache } from '@bloomkit/guard'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { redisClient, uniqueName } from './support/redis.js'
import { ROWS, UsersDb, type User } from './support/users-db.js'

let db: UsersDb
let redis: Redis
const names: string[] = []

beforeAll(async () => {
  db = await UsersDb.create()
  redis = redisClient()
})

afterAll(async () => {
  for (const name of names) await RedisBloomFilter.destroy(redis, name)
  redis.disconnect()
  await db.close()
})

const ids = Array.from({ length: ROWS }, (_, i) => String(i + 1))

/** A Redis filter holding every id, with a feed or not; ~12 KiB of bits (10 000 keys at 1 %). */
async function idFilter(options: { feed?: boolean; counting?: true; growth?: number } = {}): Promise<string> {
  const name = uniqueName('ids')
  names.push(name)
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 10_000, errorRate: 0.01, ...options })
  await filter.addMany(ids)
  await filter.close()
  return name
}

const bitsBytes = (filter: object) => (filter as RedisBloomFilter).parameters.bits / 8
const replicaOf = (filter: object) => (filter as RedisBloomFilter).replica

describe('openGuardFilter (issue 35 item 6)', () => {
  test('a filter with a feed that fits the budget is opened with a replica, and the guard reads through it', async () => {
    const name = await idFilter({ feed: true })
    const filter = await openGuardFilter(RedisBloomFilter, redis, name)
    const status = replicaOf(filter)
    expect(status).toBeDefined()
    expect(status!.readyShards).toBe(status!.shards)
    expect(status!.maxStaleness).toBe(0) // strict: a guard never reads a stale "absent"
    const guard = new CacheGuard<User>({ filter, cache: new RedisCache(redis), name: uniqueName('guard'), load: db.user, cacheTimeout: 5000 })
    expect(await guard.get('7')).toEqual({ id: '7', name: 'user 7' })
    db.queries = 0
    expect(await guard.get('no-such-user')).toBeNull()
    expect(db.queries).toBe(0)
    await guard.close()
    await filter.close()
  })

  test('an id created through another instance is found by a get that starts after created resolved', async () => {
    const name = await idFilter({ feed: true })
    const local = await openGuardFilter(RedisBloomFilter, redis, name)
    expect(replicaOf(local)).toBeDefined()
    const elsewhere = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    const writer = new CacheGuard<User>({ filter: elsewhere, name: uniqueName('writer'), load: db.user })
    const reader = new CacheGuard<User>({ filter: local, name: uniqueName('reader'), load: db.user })
    for (let i = 0; i < 20; i++) {
      const id = `new-${i}`
      await db.insert(id, `new user ${i}`)
      await writer.created(id)
      expect(await reader.get(id), id).toEqual({ id, name: `new user ${i}` })
    }
    await Promise.all([writer.close(), reader.close()])
    await Promise.all([local.close(), elsewhere.close()])
  })

  test('a filter over the budget, one without a feed, and a counting or layered one are opened without a replica', async () => {
    const fed = await idFilter({ feed: true })
    const cases = [
      { name: fed, options: { memoryBudget: 1000 } },
      { name: fed, options: { memoryBudget: 0 } },
      { name: await idFilter(), options: {} },
      { name: await idFilter({ counting: true }), options: {} },
      { name: await idFilter({ growth: 2 }), options: {} },
    ]
    for (const { name, options } of cases) {
      const filter = await openGuardFilter(RedisBloomFilter, redis, name, options)
      expect(replicaOf(filter), name).toBeUndefined()
      expect(await filter.has('7')).toBe(true)
      await filter.close()
    }
    // The budget is inclusive: exactly the bits' bytes is enough.
    const sized = await RedisBloomFilter.open(redis, fed, { kind: 'fixed' })
    await sized.close()
    const exact = await openGuardFilter(RedisBloomFilter, redis, fed, { memoryBudget: bitsBytes(sized) })
    expect(replicaOf(exact)).toBeDefined()
    await exact.close()
  })

  test('a bad memoryBudget or an unknown option is GUARD_INVALID_OPTION, before any command', async () => {
    for (const options of [{ memoryBudget: -1 }, { memoryBudget: 1.5 }, { memoryBudget: '64' }, { memoryBudget: null }, { memoryBudgets: 1 }]) {
      const error = await openGuardFilter(RedisBloomFilter, redis, 'never-opened', options as object).then(() => undefined, (e: unknown) => e)
      expect(error, JSON.stringify(options)).toBeInstanceOf(GuardError)
      expect((error as GuardError).code).toBe('GUARD_INVALID_OPTION')
      expect((error as GuardError).message).toMatch(/memoryBudget/)
    }
  })
})
