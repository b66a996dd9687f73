import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CacheGuard, GuardError } from '@bloomkit/guard'
import { describe, expect, test } from 'vitest'
import { uniqueName } from './support/redis.js'
import { useServices } from './support/services.js'
import type { User } from './support/users-db.js'

// Issue 26: a load cannot hang a get. Real Redis (the lock) and PGlite (the retry's load).
const services = useServices()

describe('loadTimeout', () => {
  test('a load that never settles rejects every waiting get with GUARD_LOAD_TIMEOUT within loadTimeout; the next get loads again', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.001 })
    filter.add('5')
    const name = uniqueName('hang')
    let hang = true
    const signals: AbortSignal[] = []
    const load = (id: string, { signal }: { signal: AbortSignal }) => {
      signals.push(signal)
      return hang ? new Promise<null>(() => {}) : services.db.user(id)
    }
    const guard = new CacheGuard<User>({ filter, cache: services.redis, name, load, loadTimeout: 300, cacheTimeout: 5000 })
    const started = Date.now()
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => guard.get('5')))
    const took = Date.now() - started
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected')
      const error = (outcome as PromiseRejectedResult).reason as GuardError
      expect(error).toBeInstanceOf(GuardError)
      expect(error.code).toBe('GUARD_LOAD_TIMEOUT')
      expect(error.id).toBe('5')
      expect(error.message).toMatch(/load\("5"\) did not settle within loadTimeout \(300 ms\)/)
    }
    expect(took).toBeGreaterThanOrEqual(290)
    expect(signals).toHaveLength(1) // one load for all five
    expect(signals[0].aborted).toBe(true) // the loader may cancel its query
    expect(guard.stats()).toMatchObject({ loads: 1, joinedLoads: 4, loadTimeouts: 1, loadErrors: 0 })
    // The flight and the Redis lock are released: the next get loads at once (no lockWait).
    await expect.poll(() => services.redis.exists(`${name}!:5`)).toBe(0)
    expect(await services.redis.exists(`${name}:5`)).toBe(0) // nothing cached
    hang = false
    const again = Date.now()
    expect(await guard.get('5')).toEqual({ id: '5', name: 'user 5' })
    expect(guard.stats()).toMatchObject({ loads: 2, lockTimeouts: 0 })
    expect(Date.now() - again).toBeLessThan(1000) // the default lockWait, had the lock been left
  })

  test('close() does not wait for a load that never settles beyond its loadTimeout', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.001 })
    filter.add('1')
    const guard = new CacheGuard<User>({ filter, name: uniqueName('hang-close'), load: () => new Promise<null>(() => {}), loadTimeout: 100 })
    const pending = guard.get('1').catch((error: GuardError) => error.code)
    await guard.close()
    expect(await pending).toBe('GUARD_LOAD_TIMEOUT')
  })

  test('loadTimeout defaults to 5000 ms and takes 1 to 600000', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    for (const bad of [0, -1, 1.5, 600_001, Number.NaN]) {
      expect(() => new CacheGuard<User>({ filter, name: 'x', load: services.db.user, loadTimeout: bad })).toThrow(/^loadTimeout must be an integer from 1 to 600000/)
    }
    expect(() => new CacheGuard<User>({ filter, name: 'x', load: services.db.user, loadTimeout: 600_000 })).not.toThrow()
  })
})
