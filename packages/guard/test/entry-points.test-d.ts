import { expectTypeOf, test } from 'vitest'
import type * as Guard from '@bloomkit/guard'

test("'@bloomkit/guard' exports only its public classes and openGuardFilter", () => {
  expectTypeOf<keyof typeof Guard>().toEqualTypeOf<'CacheGuard' | 'GuardError' | 'RedisCache' | 'openGuardFilter'>()
})

test("'@bloomkit/guard' exports its option, cache and stats types", () => {
  expectTypeOf<Guard.CacheGuardOptions<string>>().toBeObject()
  expectTypeOf<Guard.GuardCache>().toBeObject()
  expectTypeOf<Guard.RedisCommandClient>().toBeObject()
  expectTypeOf<Guard.GuardFilter>().toBeObject()
  expectTypeOf<Guard.GuardStats>().toBeObject()
  expectTypeOf<Guard.WarmOptions>().toBeObject()
  expectTypeOf<Guard.RebuildOptions>().toBeObject()
  expectTypeOf<Guard.GuardKey>().not.toBeNever()
  expectTypeOf<Guard.GuardErrorCode>().toBeString()
  expectTypeOf<Guard.OpenGuardFilterOptions>().toBeObject()
  expectTypeOf<Guard.RedisFilterClass<unknown, Guard.GuardFilter>>().toBeObject()
})
