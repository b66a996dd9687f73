import type * as Counting from '@bloomkit/memory-backend/counting'
import { expectTypeOf, test } from 'vitest'
import type * as Memory from '@bloomkit/memory-backend'
import type * as Layered from '@bloomkit/memory-backend/layered'
import type * as Reader from '@bloomkit/memory-backend/reader'

test("'@bloomkit/memory-backend' exports only its fixed filter and store: no layered code", () => {
  expectTypeOf<keyof typeof Memory>().toEqualTypeOf<'MemoryBitStore' | 'MemoryBloomFilter' | 'BloomError' | 'isBloomError' | 'optimalParameters' | 'sizeFilter'>()
})

test("'@bloomkit/memory-backend/layered' exports the layered filter, and the fixed one its import may return", () => {
  expectTypeOf<keyof typeof Layered>().toEqualTypeOf<'LayeredMemoryFilter' | 'MemoryBloomFilter'>()
  expectTypeOf<Awaited<ReturnType<typeof Layered.LayeredMemoryFilter.import>>['kind']>().toEqualTypeOf<'fixed' | 'layered'>()
})

test("'@bloomkit/memory-backend/counting' holds the counting filter, apart from the plain filter's entry", () => {
  expectTypeOf<keyof typeof Counting>().toEqualTypeOf<'CountingMemoryFilter' | 'MemoryCounterStore'>()
  expectTypeOf<Counting.CountingMemoryFilter['remove']>().returns.toEqualTypeOf<boolean>()
  expectTypeOf<Counting.CountingMemoryFilter['removeMany']>().returns.toEqualTypeOf<boolean[]>()
  expectTypeOf<Memory.MemoryBloomFilter>().not.toHaveProperty('remove')
})

test("'@bloomkit/memory-backend/reader' opens snapshots and answers checks, nothing that adds", () => {
  expectTypeOf<keyof typeof Reader>().toEqualTypeOf<'openSnapshot' | 'openLayeredSnapshot' | 'BloomError' | 'isBloomError'>()
  expectTypeOf<ReturnType<typeof Reader.openSnapshot>>().toEqualTypeOf<Reader.SnapshotFilter>()
  expectTypeOf<Reader.SnapshotFilter['has']>().returns.toEqualTypeOf<boolean>()
  expectTypeOf<Reader.SnapshotFilter>().not.toHaveProperty('add')
})
