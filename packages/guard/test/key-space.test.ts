import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CacheGuard, type CacheGuardOptions } from '@bloomkit/guard'
import { describe, expect, test } from 'vitest'
import { uniqueName } from './support/redis.js'
import { errorOf, useServices } from './support/services.js'
import type { User } from './support/users-db.js'

// Issue 26: distinct (guard, id) pairs never share a cache entry, and no entry (old, foreign or
// unreadable) makes an existing row read as absent. Real Redis, real PGlite.
const services = useServices()

/** A guard of `name` over the users table whose filter holds `ids`. */
async function guardOf(name: string, ids: string[], options: Partial<CacheGuardOptions<User>> = {}) {
  const filter = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.001 })
  filter.addMany(ids)
  return new CacheGuard<User>({ filter, cache: services.redis, name, load: services.db.user, cacheTimeout: 5000, ...options })
}

describe('guard names', () => {
  test('guard "app:admin" caching "absent" for id "x" does not hide guard "app"\'s row "admin:x"', async () => {
    const app = uniqueName('app')
    await services.db.insert(`admin:x-${app}`, 'Admin X')
    const admin = await guardOf(`${app}:admin`, [`x-${app}`]) // in its filter, not in the table: cached absent
    const users = await guardOf(app, [`admin:x-${app}`])
    expect(await admin.get(`x-${app}`)).toBeNull()
    expect(admin.stats().loadedAbsent).toBe(1)
    expect(await users.get(`admin:x-${app}`)).toEqual({ id: `admin:x-${app}`, name: 'Admin X' })
    // and the other way round: the row cached by "app" is not a value of "app:admin"
    expect(await admin.get(`x-${app}`)).toBeNull()
  })

  test('names that are prefixes of one another, or hold separators and escapes, write distinct keys', async () => {
    const base = uniqueName('prefix')
    const names = [base, `${base}:`, `${base}::`, `${base}:a`, `${base}#`, `${base}!`, `${base}%3A`, `${base}%`, `${base}~`]
    const ids = [':a', 'a', '', '!:a', '#', '%3Aa', '~"a"']
    const seen = new Map<string, string>()
    for (const name of names) {
      const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.001 })
      filter.addMany(ids)
      const guard = new CacheGuard<string>({ filter, cache: services.redis, name, load: (id) => JSON.stringify([name, id]), cacheTimeout: 5000 })
      for (const id of ids) {
        expect(await guard.get(id)).toBe(JSON.stringify([name, id]))
        expect(await guard.get(id)).toBe(JSON.stringify([name, id])) // from the cache: its own entry
      }
      expect(guard.stats()).toMatchObject({ loads: ids.length, cacheHits: ids.length })
    }
    const keys = await scanKeys(`${base}*`)
    for (const key of keys) {
      const value = await services.redis.get(key)
      expect(seen.has(key), key).toBe(false)
      seen.set(key, value!)
    }
    expect(keys.length).toBe(names.length * ids.length) // one entry each, none shared, no lock left
  })

  test('a plain name keeps the key <name>:<id>; ":", "#", "!", "~" and "%" in a name are percent-escaped', async () => {
    const base = uniqueName('format')
    const plain = await guardOf(base, ['1'])
    await plain.get('1')
    expect(await services.redis.get(`${base}:1`)).toBe('V{"id":"1","name":"user 1"}')
    const odd = await guardOf(`${base}:a#b!c~d%e`, ['1'])
    await odd.get('1')
    expect(await services.redis.get(`${base}%3Aa%23b%21c%7Ed%25e:1`)).toBe('V{"id":"1","name":"user 1"}')
  })

  test('a name with a lone surrogate is GUARD_INVALID_OPTION', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    expect(() => new CacheGuard<User>({ filter, name: 'users\uD801', load: services.db.user })).toThrow(/^name must be/)
  })
})

describe('ids', () => {
  test('"x\\uFFFD" cached as absent does not hide the existing row "x\\uD801" (a lone surrogate)', async () => {
    const name = uniqueName('surrogate')
    // PostgreSQL text holds no lone surrogate, so this table keys rows by the id's JSON literal
    // ("x\ud801"): a database that tells the two ids apart, as a Map or a UTF-16 column would.
    const lone = `x\uD801-${name}`
    const replaced = `x\uFFFD-${name}`
    await services.db.insert(JSON.stringify(lone), 'Lone')
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.001 })
    filter.add(lone) // the filter encodes a lone surrogate as U+FFFD: it passes `replaced` too
    expect(filter.has(replaced)).toBe(true)
    const guard = new CacheGuard<User>({ filter, cache: services.redis, name, load: (id) => services.db.user(JSON.stringify(id)), cacheTimeout: 5000 })
    expect(await guard.get(replaced)).toBeNull()
    expect(guard.stats().loadedAbsent).toBe(1)
    expect(await guard.get(lone)).toEqual({ id: JSON.stringify(lone), name: 'Lone' })
    expect(await guard.get(lone)).toEqual({ id: JSON.stringify(lone), name: 'Lone' }) // its own cached entry
    expect(await guard.get(replaced)).toBeNull()
    expect(guard.stats()).toMatchObject({ loads: 2, cacheHits: 1, cachedAbsentHits: 1 })
    // A well-formed id keeps <name>:<id>; one with a lone surrogate is <name>~<its JSON literal>.
    expect(await services.redis.get(`${name}:${replaced}`)).toBe('N')
    expect(await services.redis.get(`${name}~${JSON.stringify(lone)}`)).toBe(`V${JSON.stringify({ id: JSON.stringify(lone), name: 'Lone' })}`)
  })

  test('getMany and invalidate use the same keys as get for lone-surrogate ids', async () => {
    const name = uniqueName('surrogate-many')
    const lone = `\uDC00y-${name}`
    await services.db.insert(JSON.stringify(lone), 'before')
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.001 })
    filter.add(lone)
    const guard = new CacheGuard<User>({ filter, cache: services.redis, name, load: (id) => services.db.user(JSON.stringify(id)), cacheTimeout: 5000 })
    expect((await guard.getMany([lone, `\uFFFDy-${name}`])).map((user) => user?.name ?? null)).toEqual(['before', null])
    await services.db.rename(JSON.stringify(lone), 'after')
    await guard.invalidate(lone)
    expect((await guard.get(lone))?.name).toBe('after')
  })
})

describe('entries', () => {
  test('a row that serializes to null is refused with GUARD_SERIALIZE_FAILED, never cached to read back as absent', async () => {
    const name = uniqueName('vnull')
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.001 })
    filter.addMany(['7', 'nan'])
    // A row whose toJSON gives null, and a NaN: JSON.stringify writes both as "null".
    const load = (id: string) => (id === '7' ? { id, toJSON: () => null } : Number.NaN)
    const guard = new CacheGuard<unknown>({ filter, cache: services.redis, name, load, cacheTimeout: 5000 })
    for (const id of ['7', '7', 'nan']) {
      const error = await errorOf(guard.get(id))
      expect(error.code).toBe('GUARD_SERIALIZE_FAILED')
      expect(error.id).toBe(id)
      expect(error.message).toMatch(/reads back as null/)
    }
    expect(await services.redis.exists(`${name}:7`, `${name}:nan`)).toBe(0)
  })

  test('a custom serializer whose text deserializes to null or undefined is refused the same way', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.001 })
    filter.add('1')
    const guard = new CacheGuard<string>({
      filter,
      cache: services.redis,
      name: uniqueName('serde-null'),
      load: () => '',
      serialize: (value) => value,
      deserialize: (text) => (text === '' ? (undefined as unknown as string) : text),
    })
    expect((await errorOf(guard.get('1'))).code).toBe('GUARD_SERIALIZE_FAILED')
  })

  test('an entry that reads back as null is loaded again and overwritten, never answered as absent', async () => {
    const name = uniqueName('read-null')
    const guard = await guardOf(name, ['9'], { lock: false })
    await services.redis.set(`${name}:9`, 'Vnull', 'PX', 60_000)
    expect(await guard.get('9')).toEqual({ id: '9', name: 'user 9' })
    expect(guard.stats()).toMatchObject({ cacheErrors: 1, loads: 1 })
    expect(await services.redis.get(`${name}:9`)).toBe('V{"id":"9","name":"user 9"}')
  })

  test("entries in 0.1's format (n, v<json>, vnull) are never read: the row is loaded and the entry replaced", async () => {
    const name = uniqueName('legacy')
    const guard = await guardOf(name, ['1', '2', '3'], { lock: false })
    await services.redis.set(`${name}:1`, 'n', 'PX', 60_000)
    await services.redis.set(`${name}:2`, 'vnull', 'PX', 60_000)
    await services.redis.set(`${name}:3`, 'v{"id":"3","name":"someone else"}', 'PX', 60_000)
    expect(await guard.getMany(['1', '2', '3'])).toEqual([1, 2, 3].map((i) => ({ id: String(i), name: `user ${i}` })))
    expect(guard.stats()).toMatchObject({ loads: 3, cacheHits: 0, cachedAbsentHits: 0 })
    expect(await services.redis.get(`${name}:1`)).toBe('V{"id":"1","name":"user 1"}')
  })
})

async function scanKeys(pattern: string): Promise<string[]> {
  const keys: string[] = []
  let cursor = '0'
  do {
    const [next, batch] = await services.redis.scan(cursor, 'MATCH', pattern.replace(/[[\]?\\]/g, '\\$&'), 'COUNT', 1000)
    keys.push(...batch)
    cursor = next
  } while (cursor !== '0')
  return keys
}
