import type { GuardCache } from '@bloomkit/guard'

/**
 * A real cache (e.g. RedisCache) with each method's calls counted; without `combine`, it hides the
 * optional one-round-trip calls, so the guard takes its lock with `lock` and `getMany`.
 */
export function countingCache(inner: GuardCache, combine = false): GuardCache & { calls: Record<string, number> } {
  const calls: Record<string, number> = { getMany: 0, set: 0, setIf: 0, lock: 0, unlock: 0, lockAndGet: 0, setIfAndUnlock: 0 }
  const combined: Partial<GuardCache> = {}
  // The one-round-trip calls only when the inner cache has them (RedisCache does) and `combine` asks.
  if (combine && inner.lockAndGet !== undefined && inner.setIfAndUnlock !== undefined) {
    combined.lockAndGet = (lockKey, token, ttl, key) => (calls.lockAndGet++, inner.lockAndGet!(lockKey, token, ttl, key))
    combined.setIfAndUnlock = (key, value, ttl, expected, lockKey, token) => (calls.setIfAndUnlock++, inner.setIfAndUnlock!(key, value, ttl, expected, lockKey, token))
  }
  return {
    ...combined,
    calls,
    getMany: (keys) => (calls.getMany++, inner.getMany(keys)),
    set: (key, value, ttl) => (calls.set++, inner.set(key, value, ttl)),
    setIf: (key, value, ttl, expected) => (calls.setIf++, inner.setIf(key, value, ttl, expected)),
    lock: (key, token, ttl) => (calls.lock++, inner.lock!(key, token, ttl)),
    unlock: (key, token) => (calls.unlock++, inner.unlock!(key, token)),
  }
}
