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
  expectTypeOf<Redis.ReplicaOptions>().toBeObject()
  expectTypeOf<Redis.ReplicaStatus>().toBeObject()
})

test('RedisBloomFilter.open and .import are typed by kind: any class without one, that class with one', () => {
  const RBF = {} as typeof Redis.RedisBloomFilter
  const client = {} as Redis.RedisClient
  type Any = Redis.RedisBloomFilter | Redis.LayeredRedisFilter | Redis.RedisCountingFilter
  expectTypeOf(RBF.open(client, 'n')).resolves.toEqualTypeOf<Any>()
  expectTypeOf(RBF.open(client, 'n', { kind: 'fixed' })).resolves.toEqualTypeOf<Redis.RedisBloomFilter>()
  expectTypeOf(RBF.open(client, 'n', { kind: 'layered' })).resolves.toEqualTypeOf<Redis.LayeredRedisFilter>()
  expectTypeOf(RBF.open(client, 'n', { kind: 'counting' })).resolves.toEqualTypeOf<Redis.RedisCountingFilter>()
  expectTypeOf(RBF.import(client, 'n', new Uint8Array(0))).resolves.toEqualTypeOf<Any>()
  expectTypeOf(RBF.import(client, 'n', new Uint8Array(0), { kind: 'layered' })).resolves.toEqualTypeOf<Redis.LayeredRedisFilter>()
  expectTypeOf(RBF.import(client, 'n', new Uint8Array(0), { kind: 'counting' })).resolves.toEqualTypeOf<Redis.RedisCountingFilter>()
  // kind narrows the union.
  const any = {} as Any
  if (any.kind === 'layered') expectTypeOf(any).toEqualTypeOf<Redis.LayeredRedisFilter>()
  else if (any.kind === 'counting') expectTypeOf(any).toEqualTypeOf<Redis.RedisCountingFilter>()
  else expectTypeOf(any).toEqualTypeOf<Redis.RedisBloomFilter>()
})

test('a RedisBloomFilter shows its fill by countSetBits, not by a public store', () => {
  const filter = {} as Redis.RedisBloomFilter
  expectTypeOf(filter.countSetBits()).toEqualTypeOf<Promise<number[]>>()
  expectTypeOf<'bitStore'>().not.toExtend<keyof Redis.RedisBloomFilter>()
})

test('the inner ways in of the door (marked @internal) are not in the published types', () => {
  // RedisBloomFilter.create/open/import hand their checked settings to the counting and layered
  // classes through these; a user calling one would skip every option check.
  type Counting = typeof Redis.RedisCountingFilter
  type Layered = typeof Redis.LayeredRedisFilter
  expectTypeOf<Extract<keyof Counting, 'create' | 'open'>>().toEqualTypeOf<'create' | 'open'>()
  expectTypeOf<Extract<keyof Counting, 'createWith' | 'importWith' | 'fromMeta'>>().toEqualTypeOf<never>()
  expectTypeOf<Extract<keyof Layered, 'createWith' | 'importWith' | 'over'>>().toEqualTypeOf<never>()
})
