import { expectTypeOf, test } from 'vitest'
import type * as Level from '@bloomkit/level-backend'

test("'@bloomkit/level-backend' exports only its public classes", () => {
  expectTypeOf<keyof typeof Level>().toEqualTypeOf<'CountingLevelFilter' | 'LayeredLevelFilter' | 'LevelBitStore' | 'LevelBloomFilter' | 'BloomError' | 'isBloomError' | 'optimalParameters' | 'sizeFilter'>()
})

test("'@bloomkit/level-backend' exports its option types", () => {
  expectTypeOf<Level.LevelCreateOptions>().toBeObject()
  expectTypeOf<Level.LevelOpenOptions>().toBeObject()
  expectTypeOf<Level.LevelImportOptions>().toBeObject()
  expectTypeOf<Level.LevelStoreOptions>().toBeObject()
  expectTypeOf<Level.LevelCreateStoreOptions>().toBeObject()
  expectTypeOf<Level.LayeredLevelOptions>().toBeObject()
  expectTypeOf<Level.LayeredLevelOpenOptions>().toBeObject()
  expectTypeOf<Level.SnapshotSource>().not.toBeNever()
})
