import { Redis } from 'ioredis'
import { inject } from 'vitest'

/** Client options that never hang: commands fail fast while the server is down, reconnection goes on. */
export const fastFail = {
  maxRetriesPerRequest: 1,
  connectTimeout: 1000,
  retryStrategy: (times: number) => Math.min(times * 50, 300),
} as const

/** A client of `address` (default: the shared throwaway server); the test must quit it. */
export function redisClient(address: { host: string; port: number } = inject('redisAddress')): Redis {
  const redis = new Redis({ host: address.host, port: address.port, ...fastFail })
  redis.on('error', () => {})
  return redis
}

let counter = 0
/**
 * A name no other test (or run) uses. Dots, not colons: a guard name's `:` is escaped in its keys
 * (`%3A`), and most tests read the keys of plain names; key-space.test.ts covers escaped ones.
 */
export function uniqueName(what: string): string {
  return `test.${what}.${process.pid}.${Date.now().toString(36)}.${counter++}`
}
