export { RedisBloomFilter, DEFAULT_SHARD_BITS, MAX_REDIS_SHARD_BITS, type RedisCreateOptions, type RedisFilterOptions, type RebuildOptions } from './redis-bloom-filter.js'
export { RedisBitStore, type RedisClient, type RedisStoreOptions } from './redis-bit-store.js'
export { KeyLayout, slotOf } from './key-layout.js'
export { STORE_FORMAT, type FilterMeta, type FilterState } from './metadata.js'
