/** Counters since the guard was made; see {@link CacheGuard.stats}. */
export interface GuardStats {
  /** Keys asked for (`get` counts 1, `getMany` one per key). */
  requests: number
  /** Answered null because the filter said absent: no cache, no database. */
  filtered: number
  /** Answered from the in-process `l1` cache. */
  l1Hits: number
  /** Answered with a value from the cache. */
  cacheHits: number
  /** Answered null from a cached "absent" marker. */
  cachedAbsentHits: number
  /** Calls of `load` (database reads). */
  loads: number
  /** Loads that found nothing (false positives of the filter, deleted or not yet announced rows). */
  loadedAbsent: number
  /** Requests that shared a load already running in this process (single flight). */
  joinedLoads: number
  /** Loads this process skipped because another process held the key's lock and cached the result. */
  sharedLoads: number
  /** Lock waits that ran out (`lockWait`), after which this process loaded itself. */
  lockTimeouts: number
  /** Filter calls that failed or timed out (then `onFilterError` decided). */
  filterErrors: number
  /** Cache calls that failed or timed out, and unreadable cache entries (then the next step answered). */
  cacheErrors: number
  /** Loads that threw or rejected. */
  loadErrors: number
  /** Loads that ran past `loadTimeout` (their waiting gets rejected with `GUARD_LOAD_TIMEOUT`). */
  loadTimeouts: number
}

/** Every counter at zero, for a new guard. */
export function zeroStats(): GuardStats {
  return {
    requests: 0,
    filtered: 0,
    l1Hits: 0,
    cacheHits: 0,
    cachedAbsentHits: 0,
    loads: 0,
    loadedAbsent: 0,
    joinedLoads: 0,
    sharedLoads: 0,
    lockTimeouts: 0,
    filterErrors: 0,
    cacheErrors: 0,
    loadErrors: 0,
    loadTimeouts: 0,
  }
}
