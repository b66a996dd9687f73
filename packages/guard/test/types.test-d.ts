// Checked by vitest's typecheck (this project's config) and by the build (`tsc -p tsconfig.json` at the root compiles every test file).
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { CacheGuard, GuardError, RedisCache, type CacheGuardOptions, type GuardCache, type GuardErrorCode } from '@bloomkit/guard'
import type { Cluster, Redis } from 'ioredis'
import { describe, expectTypeOf, test } from 'vitest'

type User = { id: string; name: string }
declare const load: (id: string) => Promise<User | undefined>

describe('@bloomkit/guard types', () => {
  test("every backend's filter and ioredis's Redis and Cluster fit the options without casts", () => {
    expectTypeOf<MemoryBloomFilter>().toMatchTypeOf<CacheGuardOptions<User>['filter']>()
    expectTypeOf<LevelBloomFilter>().toMatchTypeOf<CacheGuardOptions<User>['filter']>()
    expectTypeOf<RedisBloomFilter>().toMatchTypeOf<CacheGuardOptions<User>['filter']>()
    expectTypeOf<Redis>().toMatchTypeOf<NonNullable<CacheGuardOptions<User>['cache']>>()
    expectTypeOf<Cluster>().toMatchTypeOf<NonNullable<CacheGuardOptions<User>['cache']>>()
    expectTypeOf<RedisCache>().toMatchTypeOf<GuardCache>()
  })

  test('get answers the value type or null; keys are the declared key type', () => {
    const users = new CacheGuard<User>({ filter: {} as MemoryBloomFilter, name: 'users', load })
    expectTypeOf(users.get('1')).toEqualTypeOf<Promise<User | null>>()
    expectTypeOf(users.getMany(['1'])).toEqualTypeOf<Promise<(User | null)[]>>()
    // @ts-expect-error a string guard takes no byte keys
    void users.get(new Uint8Array(1))
    const bytes = new CacheGuard<User, Uint8Array>({ filter: {} as MemoryBloomFilter, name: 'b', load: async (id: Uint8Array) => ({ id: String(id[0]), name: '' }) })
    expectTypeOf(bytes.get).parameter(0).toEqualTypeOf<Uint8Array>()
  })

  test('error codes are a closed union', () => {
    expectTypeOf<GuardError['code']>().toEqualTypeOf<GuardErrorCode>()
    expectTypeOf<'GUARD_LOAD_FAILED'>().toMatchTypeOf<GuardErrorCode>()
    expectTypeOf<'BLOOM_CLOSED'>().not.toMatchTypeOf<GuardErrorCode>()
  })
})
