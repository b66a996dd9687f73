import { expectTypeOf, test } from 'vitest'
import type * as Memory from '@bloomkit/memory-backend'

test("'@bloomkit/memory-backend' exports only its public classes", () => {
  expectTypeOf<keyof typeof Memory>().toEqualTypeOf<'LayeredMemoryFilter' | 'MemoryBitStore' | 'MemoryBloomFilter'>()
})
