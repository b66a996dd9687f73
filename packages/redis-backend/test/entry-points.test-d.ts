import { expectTypeOf, test } from 'vitest'
import type * as Redis from '@bloomkit/redis-backend'

test("'@bloomkit/redis-backend' exports only its public classes, sizing and limits", () => {
  expectTypeOf<keyof typeof Redis>().toEqualTypeOf<'DEFAULT_SHARD_BITS' | 'MAX_REDIS_SHARD_BITS' | 'RedisBloomFilter' | 'RedisCountingFilter' | 'LayeredRedisFilter' | 'RedisLayeredFilter' | 'STORE_FORMAT' | 'sizeRedisFilter' | 'BloomError' | 'isBloomError' | 'optimalParameters' | 'sizeFilter'>()
})

test("'@bloomkit/redis-backend' exports its option and client types", () => {
  expectTypeOf<Redis.RedisClient>().toBeObject()
  expectTypeOf<Redis.RedisCreateOptions>().toBeObject()
  expectTypeOf<Redis.RedisNewFilterOptions>().toBeObject()
  expectTypeOf<Redis.RedisFilterOptions>().toBeObject()
  expectTypeOf<Redis.RedisStoreOptions>().toBeObject()
  expectTypeOf<Redis.LayeredRedisOptions>().not.toBeNever()
  expectTypeOf<Redis.RedisLayeredOptions>().toEqualTypeOf<Redis.LayeredRedisOptions>()
  expectTypeOf<Redis.LayeredRedisOpenOptions>().toBeObject()
  expectTypeOf<Redis.RebuildOptions>().toBeObject()
  expectTypeOf<Redis.FilterMeta>().toBeObject()
  expectTypeOf<Redis.FilterState>().toBeString()
  expectTypeOf<Redis.SnapshotSource>().not.toBeNever()
})
