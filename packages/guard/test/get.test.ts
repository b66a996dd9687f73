import { LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CacheGuard, GuardError, RedisCache, type CacheGuardOptions } from '@bloomkit/guard'
import type { Redis } from 'ioredis'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { countingCache } from './support/counting-cache.js'
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

/** A memory filter holding ids 1..ROWS, a counted Redis cache, and a guard over the test database. */
async function setUp(options: Partial<CacheGuardOptions<User>> = {}) {
  const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
  filter.addMany(Array.from({ length: ROWS }, (_, i) => String(i + 1)))
  const cache = countingCache(new RedisCache(redis))
  const name = uniqueName('guard')
  // Generous timeouts: these tests are about behaviour, and a loaded machine can be slow.
  const guard = new CacheGuard<User>({ filter, cache, name, load: db.user, cacheTimeout: 5000, ...options })
  return { filter, cache, name, guard }
}

async function errorOf(promise: Promise<unknown>): Promise<GuardError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(GuardError)
  return error as GuardError
}

describe('get (behaviour 1)', () => {
  test('a key the filter has never seen answers null without touching the cache or the database', async () => {
    const { guard, cache } = await setUp()
    expect(await guard.get('absent-1')).toBeNull()
    expect(await guard.get('absent-2')).toBeNull()
    expect(db.queries).toBe(0)
    expect(cache.calls.getMany + cache.calls.setIf + cache.calls.lock).toBe(0)
    expect(guard.stats()).toMatchObject({ requests: 2, filtered: 2, loads: 0 })
  })

  test('an existing key loads once, is cached for ttl (± jitter), then answers from the cache', async () => {
    const { guard, name } = await setUp({ ttl: 100, jitter: 0.1 })
    expect(await guard.get('7')).toEqual({ id: '7', name: 'user 7' })
    expect(await guard.get('7')).toEqual({ id: '7', name: 'user 7' })
    expect(db.queries).toBe(1)
    const ttl = await redis.pttl(`${name}:7`)
    expect(ttl).toBeGreaterThan(89_000)
    expect(ttl).toBeLessThanOrEqual(110_000)
    expect(await redis.get(`${name}:7`)).toBe('V{"id":"7","name":"user 7"}')
    expect(guard.stats()).toMatchObject({ requests: 2, loads: 1, cacheHits: 1, loadedAbsent: 0 })
  })

  test('a false positive of the filter is loaded once and cached as "absent" for nullTtl', async () => {
    const { guard, filter, name } = await setUp({ nullTtl: 5, jitter: 0 })
    filter.add('gone') // in the filter, not in the database: a false positive or a deleted row
    expect(await guard.get('gone')).toBeNull()
    expect(await guard.get('gone')).toBeNull()
    expect(db.queries).toBe(1)
    expect(await redis.get(`${name}:gone`)).toBe('N')
    const ttl = await redis.pttl(`${name}:gone`)
    expect(ttl).toBeGreaterThan(4000)
    expect(ttl).toBeLessThanOrEqual(5000)
    expect(guard.stats()).toMatchObject({ loads: 1, loadedAbsent: 1, cachedAbsentHits: 1 })
  })

  test('jitter spreads the TTLs of entries cached together', async () => {
    const { guard, name } = await setUp({ ttl: 1000, jitter: 0.2 })
    await guard.getMany(Array.from({ length: 20 }, (_, i) => String(i + 1)))
    const ttls = await Promise.all(Array.from({ length: 20 }, (_, i) => redis.pttl(`${name}:${i + 1}`)))
    for (const ttl of ttls) expect(ttl).toBeGreaterThan(790_000)
    expect(new Set(ttls.map((t) => Math.round(t / 1000))).size).toBeGreaterThan(5)
  })
})

describe('single flight in one process (behaviour 3)', () => {
  test('100 concurrent gets of one uncached key run one load and all get its value', async () => {
    const { guard } = await setUp()
    db.delayMs = 50
    const results = await Promise.all(Array.from({ length: 100 }, () => guard.get('42')))
    expect(db.queries).toBe(1)
    for (const user of results) expect(user).toEqual({ id: '42', name: 'user 42' })
    expect(guard.stats()).toMatchObject({ loads: 1, joinedLoads: 99 })
  })

  test("a miss on RedisCache costs three cache calls: the read, the lock with a second read, the store with the unlock", async () => {
    const { filter, name } = await setUp()
    const cache = countingCache(new RedisCache(redis), true)
    const guard = new CacheGuard<User>({ filter, cache, name, load: db.user, cacheTimeout: 5000 })
    expect(await guard.get('31')).toEqual({ id: '31', name: 'user 31' })
    expect(cache.calls).toEqual({ getMany: 1, set: 0, setIf: 0, lock: 0, unlock: 0, lockAndGet: 1, setIfAndUnlock: 1 })
    expect(await redis.get(`${name}:31`)).toBe('V{"id":"31","name":"user 31"}')
    expect(await redis.exists(`${name}!:31`)).toBe(0) // the lock is released
    expect(await guard.get('31')).toEqual({ id: '31', name: 'user 31' })
    expect(cache.calls.getMany).toBe(2)
    expect(db.queries).toBe(1)
  })

  test('RedisCache.lockAndGet and setIfAndUnlock: one lock holder, a compare-and-set, an unlock only by the token', async () => {
    const cache = new RedisCache(redis)
    const key = uniqueName('entry')
    const lock = uniqueName('lock')
    expect(await cache.lockAndGet(lock, 'a', 5000, key)).toEqual({ locked: true, value: null })
    await redis.set(key, 'fence-1')
    expect(await cache.lockAndGet(lock, 'b', 5000, key)).toEqual({ locked: false, value: 'fence-1' })
    expect(await cache.setIfAndUnlock(key, 'v1', 5000, null, lock, 'b')).toBe(false) // the entry changed; not b's lock
    expect(await redis.get(key)).toBe('fence-1')
    expect(await redis.get(lock)).toBe('a')
    expect(await cache.setIfAndUnlock(key, 'v1', 5000, 'fence-1', lock, 'a')).toBe(true)
    expect(await redis.get(key)).toBe('v1')
    expect(await redis.exists(lock)).toBe(0)
    const ttl = await redis.pttl(key)
    expect(ttl).toBeGreaterThan(4000)
    expect(ttl).toBeLessThanOrEqual(5000)
  })

  test('without a cache, the filter and single flight still work', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    filter.add('5')
    const guard = new CacheGuard<User>({ filter, name: uniqueName('nocache'), load: db.user })
    db.delayMs = 20
    const results = await Promise.all([guard.get('5'), guard.get('5'), guard.get('6')])
    expect(results).toEqual([{ id: '5', name: 'user 5' }, { id: '5', name: 'user 5' }, null])
    expect(db.queries).toBe(1)
  })
})

describe('getMany', () => {
  test('answers in input order with one filter batch and one cache round trip', async () => {
    // lock: false, so the only cache reads are the batch's (a lock winner reads its key once more).
    const { guard, cache, filter } = await setUp({ lock: false })
    await guard.get('3') // cached value
    filter.add('fp')
    await guard.get('fp') // cached "absent"
    cache.calls.getMany = 0
    db.queries = 0
    let batches = 0
    const hasMany = filter.hasMany.bind(filter)
    filter.hasMany = (keys) => (batches++, hasMany(keys))
    const ids = ['3', 'nope', '4', 'fp', '4', '5']
    expect(await guard.getMany(ids)).toEqual([
      { id: '3', name: 'user 3' },
      null,
      { id: '4', name: 'user 4' },
      null,
      { id: '4', name: 'user 4' },
      { id: '5', name: 'user 5' },
    ])
    expect(batches).toBe(1)
    expect(cache.calls.getMany).toBe(1)
    expect(db.queries).toBe(2) // 4 (once, though asked twice) and 5
    expect(await guard.getMany(ids)).toHaveLength(6)
    expect(db.queries).toBe(2)
  })
})

describe('created and invalidate (behaviour 4, one process)', () => {
  test('a row inserted after start-up is found once created() resolves', async () => {
    const { guard } = await setUp()
    expect(await guard.get('new-1')).toBeNull()
    await db.insert('new-1', 'Ada')
    expect(await guard.get('new-1')).toBeNull() // not announced yet: the filter does not know it
    await guard.created('new-1')
    expect(await guard.get('new-1')).toEqual({ id: 'new-1', name: 'Ada' })
  })

  test('created() replaces a cached "absent" marker', async () => {
    const { guard, filter } = await setUp({ nullTtl: 300 })
    filter.add('back') // e.g. deleted earlier, now inserted again
    expect(await guard.get('back')).toBeNull()
    await db.insert('back', 'Grace')
    await guard.created('back')
    expect(await guard.get('back')).toEqual({ id: 'back', name: 'Grace' })
  })

  test('a load that read the database before the insert does not cache "absent" over created()', async () => {
    const { guard, filter, name } = await setUp({ nullTtl: 300 })
    filter.add('race')
    db.delayMs = 100 // the load's answer (no row) comes back late
    const early = guard.get('race')
    while (!db.queried.includes('race')) await new Promise((resolve) => setTimeout(resolve, 1))
    db.delayMs = 0 // PGlite runs queries in order: the insert runs after the early load's select
    await db.insert('race', 'Linus')
    await guard.created('race')
    expect(await guard.get('race')).toEqual({ id: 'race', name: 'Linus' }) // does not join the early load
    expect(await early).toBeNull() // it started before the row existed
    expect(await redis.get(`${name}:race`)).toBe('V{"id":"race","name":"Linus"}')
  })

  test('invalidate() after an update or a delete makes the next get read the database', async () => {
    const { guard } = await setUp()
    await db.insert('u', 'old')
    await guard.created('u')
    expect(await guard.get('u')).toEqual({ id: 'u', name: 'old' })
    await db.rename('u', 'new')
    expect(await guard.get('u')).toEqual({ id: 'u', name: 'old' }) // cached until invalidated
    await guard.invalidate('u')
    expect(await guard.get('u')).toEqual({ id: 'u', name: 'new' })
    await db.remove('u')
    await guard.invalidate('u')
    expect(await guard.get('u')).toBeNull()
  })
})

describe('serialization (behaviour 5)', () => {
  test('values go through the cache as JSON by default and through serialize/deserialize when given', async () => {
    type Dated = { id: string; seen: Date }
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    filter.add('d')
    const name = uniqueName('serde')
    const options = {
      filter,
      cache: redis,
      name,
      load: async (id: string) => ({ id, seen: new Date(Date.UTC(2026, 0, 2)) }),
      serialize: (value: Dated) => `${value.id}|${value.seen.toISOString()}`,
      deserialize: (text: string) => ({ id: text.split('|')[0], seen: new Date(text.split('|')[1]) }),
    }
    const writer = new CacheGuard<Dated>(options)
    await writer.get('d')
    expect(await redis.get(`${name}:d`)).toBe('Vd|2026-01-02T00:00:00.000Z')
    const reader = new CacheGuard<Dated>({ ...options, load: () => Promise.reject(new Error('must not load')) })
    const value = await reader.get('d')
    expect(value?.seen).toBeInstanceOf(Date)
    expect(value?.seen.getTime()).toBe(Date.UTC(2026, 0, 2))
  })

  test('a value that cannot be serialized rejects the get and caches nothing', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    filter.addMany(['big', 'fn'])
    const name = uniqueName('unserializable')
    const guard = new CacheGuard<unknown>({ filter, cache: redis, name, load: (id) => (id === 'big' ? { n: 1n } : () => 1) })
    const error = await errorOf(guard.get('big'))
    expect(error.code).toBe('GUARD_SERIALIZE_FAILED')
    expect(error.id).toBe('big')
    expect(error.message).toMatch(/"big"/)
    expect((await errorOf(guard.get('fn'))).code).toBe('GUARD_SERIALIZE_FAILED') // JSON.stringify gives undefined
    expect(await redis.exists(`${name}:big`, `${name}:fn`)).toBe(0)
  })

  test('an unreadable cache entry is loaded again and overwritten, never answered as absent', async () => {
    const { guard, name } = await setUp({ lock: false })
    await redis.set(`${name}:9`, 'V{not json', 'PX', 60_000)
    expect(await guard.get('9')).toEqual({ id: '9', name: 'user 9' })
    expect(guard.stats().cacheErrors).toBe(1)
    expect(await redis.get(`${name}:9`)).toBe('V{"id":"9","name":"user 9"}')
  })
})

describe('keys and options (behaviour 6)', () => {
  test.each([
    ['load', { load: 'db.user' }],
    ['name', { name: '' }],
    ['name', { name: 'a{b}' }],
    ['ttl', { ttl: -1 }],
    ['ttl', { ttl: 0 }],
    ['nullTtl', { nullTtl: Number.NaN }],
    ['jitter', { jitter: 2 }],
    ['onFilterError', { onFilterError: 'ignore' }],
    ['filterTimeout', { filterTimeout: 0 }],
    ['cacheTimeout', { cacheTimeout: 1.5 }],
    ['lockTtl', { lockTtl: -5 }],
    ['lockWait', { lockWait: -1 }],
    ['l1.max', { l1: { max: 0 } }],
    ['cache', { cache: {} }],
    ['serialize', { serialize: 'json' }],
    ['filter', { filter: {} }],
  ])('a bad %s is GUARD_INVALID_OPTION naming it', async (option, bad) => {
    const { filter } = await setUp()
    const error = (() => {
      try {
        new CacheGuard<User>({ filter, name: 'x', load: db.user, ...(bad as object) })
      } catch (e) {
        return e as GuardError
      }
    })()
    expect(error).toBeInstanceOf(GuardError)
    expect(error!.code).toBe('GUARD_INVALID_OPTION')
    expect(error!.message.startsWith(`${option} must be`)).toBe(true)
  })

  test.each([
    ['nulTtl', { nulTtl: 1000 }, 'CacheGuard: unknown option "nulTtl" (did you mean "nullTtl"?); it takes filter, load, cache, '],
    ['capacity', { capacity: 1000 }, 'CacheGuard: unknown option "capacity"; it takes '],
    ['l1.maks', { l1: { maks: 10 } }, 'CacheGuard l1: unknown option "maks" (did you mean "max"?); it takes max, ttl'],
  ])('an unknown option name (%s) is GUARD_INVALID_OPTION naming it, not silently ignored (issue 23)', async (_, bad, message) => {
    const { filter } = await setUp()
    let error: unknown
    try {
      new CacheGuard<User>({ filter, name: 'x', load: db.user, ...(bad as object) })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(GuardError)
    expect((error as GuardError).code).toBe('GUARD_INVALID_OPTION')
    expect((error as GuardError).message).toContain(message)
  })

  test('a closed filter is GUARD_INVALID_OPTION naming filter, at construction and at get', async () => {
    const { filter, guard } = await setUp()
    filter.close()
    expect(() => new CacheGuard<User>({ filter, name: 'x', load: db.user })).toThrow(/^filter must be an open filter/)
    const error = await errorOf(guard.get('1'))
    expect(error.code).toBe('GUARD_INVALID_OPTION')
  })

  test('a key that is not a string or a Uint8Array is GUARD_INVALID_KEY', async () => {
    const { guard } = await setUp()
    expect((await errorOf(guard.get(42 as unknown as string))).code).toBe('GUARD_INVALID_KEY')
    expect((await errorOf(guard.getMany(['1', null as unknown as string]))).code).toBe('GUARD_INVALID_KEY')
  })

  test('Uint8Array keys work and are cached apart from string keys', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    const bytes = new Uint8Array([0xab, 0x01])
    filter.addMany([bytes, 'ab01'])
    const name = uniqueName('bytes')
    const guard = new CacheGuard<string, string | Uint8Array>({ filter, cache: redis, name, load: (id) => (typeof id === 'string' ? 'text' : 'bytes') })
    expect(await guard.get(bytes)).toBe('bytes')
    expect(await guard.get('ab01')).toBe('text')
    expect(await redis.get(`${name}#ab01`)).toBe('V"bytes"')
    expect(await guard.get(new Uint8Array([9]))).toBeNull()
  })

  test('a closed guard rejects with GUARD_CLOSED after its running loads settle', async () => {
    const { guard } = await setUp()
    db.delayMs = 50
    const running = guard.get('11')
    await guard.close()
    await guard.close()
    expect(await running).toEqual({ id: '11', name: 'user 11' })
    expect((await errorOf(guard.get('1'))).code).toBe('GUARD_CLOSED')
    expect(guard.isClosed).toBe(true)
  })
})

describe('in-process L1 (behaviour 7)', () => {
  test('is off by default: every get reads the cache', async () => {
    const { guard, cache } = await setUp({ lock: false })
    await guard.get('1')
    await guard.get('1')
    expect(cache.calls.getMany).toBe(2)
    expect(guard.stats().l1Hits).toBe(0)
  })

  test('when on, serves hot keys in-process, holds at most max, and never holds "absent"', async () => {
    const { guard, cache, filter } = await setUp({ l1: { max: 2, ttl: 60_000 }, lock: false })
    filter.add('fp')
    for (const id of ['1', '2', '3']) await guard.get(id)
    cache.calls.getMany = 0
    expect(await guard.get('3')).toEqual({ id: '3', name: 'user 3' })
    expect(await guard.get('2')).toEqual({ id: '2', name: 'user 2' })
    expect(cache.calls.getMany).toBe(0)
    await guard.get('1') // evicted (max 2): read from Redis
    expect(cache.calls.getMany).toBe(1)
    await guard.get('fp')
    await guard.get('fp')
    expect(cache.calls.getMany).toBe(3)
    expect(guard.stats()).toMatchObject({ l1Hits: 2, cachedAbsentHits: 1 })
  })

  test('invalidate() drops the key from L1 too', async () => {
    const { guard } = await setUp({ l1: { max: 100 } })
    await db.insert('l1', 'before')
    await guard.created('l1')
    expect(await guard.get('l1')).toEqual({ id: 'l1', name: 'before' })
    await db.rename('l1', 'after')
    await guard.invalidate('l1')
    expect(await guard.get('l1')).toEqual({ id: 'l1', name: 'after' })
  })
})

describe('warm and rebuild', () => {
  test('warm() fills the filter from the database, reporting progress', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
    const guard = new CacheGuard<User>({ filter, cache: redis, name: uniqueName('warm'), load: db.user })
    expect(await guard.get('500')).toBeNull()
    const progress: number[] = []
    const added = await guard.warm(db.ids(300), { batchSize: 1000, onProgress: (n) => progress.push(n) })
    expect(added).toBeGreaterThanOrEqual(ROWS)
    expect(progress.slice(0, 2)).toEqual([1000, 2000])
    expect(progress.at(-1)).toBe(added)
    expect(await guard.get('500')).toEqual({ id: '500', name: 'user 500' })
  })

  test('rebuild({ into }) swaps in a filter without deleted keys; keys created meanwhile are in it', async () => {
    const { guard, filter } = await setUp()
    await db.insert('doomed', 'x')
    await guard.created('doomed')
    await db.remove('doomed')
    await guard.invalidate('doomed')
    const fresh = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.001 })
    async function* slowIds() {
      for await (const id of db.ids()) yield id
      await db.insert('during', 'y') // a row inserted while the rebuild runs
      await guard.created('during')
    }
    const old = await guard.rebuild(slowIds(), { into: fresh })
    expect(old).toBe(filter)
    expect(fresh.has('doomed')).toBe(false)
    expect(fresh.has('during')).toBe(true)
    const before = guard.stats().filtered
    expect(await guard.get('doomed')).toBeNull()
    expect(guard.stats().filtered).toBe(before + 1)
    expect(await guard.get('during')).toEqual({ id: 'during', name: 'y' })
  })

  test('rebuild() of a filter without an atomic rebuild needs into', async () => {
    const { guard } = await setUp()
    const error = await errorOf(guard.rebuild(['1']))
    expect(error.code).toBe('GUARD_INVALID_OPTION')
    expect(error.message).toMatch(/^into must be/)
  })
})

describe('filters of every backend', () => {
  test('a LevelBloomFilter (a LevelDB folder) guards the same way', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'bloomkit-guard-level-'))
    const filter = await LevelBloomFilter.create(folder, { capacity: 10_000, errorRate: 0.001 })
    try {
      const guard = new CacheGuard<User>({ filter, cache: redis, name: uniqueName('level'), load: db.user, cacheTimeout: 5000 })
      await guard.warm(db.ids())
      expect(await guard.getMany(['12', 'nobody', '13'])).toEqual([{ id: '12', name: 'user 12' }, null, { id: '13', name: 'user 13' }])
      await db.insert('lvl', 'Level')
      await guard.created('lvl')
      expect(await filter.has('lvl')).toBe(true)
      expect(await guard.get('lvl')).toEqual({ id: 'lvl', name: 'Level' })
      expect(guard.stats()).toMatchObject({ filtered: 1, loads: 3 })
    } finally {
      await filter.close()
      await rm(folder, { recursive: true, force: true })
    }
  })
})
