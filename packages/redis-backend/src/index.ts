export { RedisBloomFilter } from './redis-bloom-filter.js'
export { RedisCountingFilter } from './redis-counting-filter.js'
export { LayeredRedisFilter, RedisLayeredFilter, type LayeredRedisOpenOptions, type LayeredRedisOptions, type RedisLayeredOptions } from './layered-redis-filter.js'
export {
  DEFAULT_SHARD_BITS,
  MAX_REDIS_SHARD_BITS,
  sizeRedisFilter,
  type RebuildOptions,
  type RedisClient,
  type RedisCreateOptions,
  type RedisFilterOptions,
  type RedisReplaceOptions,
  type RedisNewFilterOptions,
  type RedisStoreOptions,
} from './options.js'
export type { SnapshotSource } from './import.js'
export type { ReplicaOptions } from './replica/replica-options.js'
export type { ReplicaStatus } from './replica/replica.js'
export { STORE_FORMAT, type FilterMeta, type FilterState } from './meta.js'
// What every user of this backend needs from core, so that installing this one package is enough.
export { BloomError, isBloomError, optimalParameters, sizeFilter, type BloomErrorCode, type BloomKey, type FilterParameters } from '@bloomkit/core'
