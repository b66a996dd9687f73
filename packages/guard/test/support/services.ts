import { GuardError } from '@bloomkit/guard'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, expect } from 'vitest'
import { redisClient } from './redis.js'
import { UsersDb } from './users-db.js'

/**
 * The test database and a client of the shared redis-server for a whole test file: made before
 * its tests, closed after them; the database's counters and delays are reset before each test.
 */
export function useServices(): { readonly db: UsersDb; readonly redis: Redis } {
  const services = {} as { db: UsersDb; redis: Redis }
  beforeAll(async () => {
    services.db = await UsersDb.create()
    services.redis = redisClient()
  })
  afterAll(async () => {
    services.redis?.disconnect()
    await services.db?.close()
  })
  beforeEach(() => {
    services.db.queries = 0
    services.db.delayMs = 0
    services.db.failing.clear()
  })
  return services
}

/** The GuardError `promise` rejects with (the test fails if it resolves or rejects with anything else). */
export async function errorOf(promise: Promise<unknown>): Promise<GuardError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(GuardError)
  return error as GuardError
}
