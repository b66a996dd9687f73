import type { GuardCache } from '@bloomkit/guard'

/** A real cache (e.g. RedisCache) with each method's calls counted. */
export function countingCache(inner: GuardCache): GuardCache & { calls: Record<string, number> } {
  const calls: Record<string, number> = { getMany: 0, set: 0, setIf: 0, lock: 0, unlock: 0 }
  return {
    calls,
    getMany: (keys) => (calls.getMany++, inner.getMany(keys)),
    set: (key, value, ttl) => (calls.set++, inner.set(key, value, ttl)),
    setIf: (key, value, ttl, expected) => (calls.setIf++, inner.setIf(key, value, ttl, expected)),
    lock: (key, token, ttl) => (calls.lock++, inner.lock!(key, token, ttl)),
    unlock: (key, token) => (calls.unlock++, inner.unlock!(key, token)),
  }
}
