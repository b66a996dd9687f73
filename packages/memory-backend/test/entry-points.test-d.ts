import type * as Counting from '@bloomkit/memory-backend/counting'
import { expectTypeOf, test } from 'vitest'
import type * as Memory from '@bloomkit/memory-backend'

test("'@bloomkit/memory-backend' exports only its public classes", () => {
  expectTypeOf<keyof typeof Memory>().toEqualTypeOf<'LayeredMemoryFilter' | 'MemoryBitStore' | 'MemoryBloomFilter'>()
})

test("'@bloomkit/memory-backend/counting' holds the counting filter, apart from the plain filter's entry", () => {
  expectTypeOf<keyof typeof Counting>().toEqualTypeOf<'CountingMemoryFilter' | 'MemoryCounterStore'>()
  expectTypeOf<Counting.CountingMemoryFilter['remove']>().returns.toEqualTypeOf<boolean>()
  expectTypeOf<Counting.CountingMemoryFilter['removeMany']>().returns.toEqualTypeOf<boolean[]>()
  expectTypeOf<Memory.MemoryBloomFilter>().not.toHaveProperty('remove')
})
