export { CacheGuard, type GuardStats, type RebuildOptions, type WarmOptions } from './cache-guard.js'
export { RedisCache, type GuardCache, type RedisCommandClient } from './cache.js'
export { GuardError, type GuardErrorCode } from './errors.js'
export type { CacheGuardOptions, GuardFilter, GuardKey } from './options.js'
