import { test } from 'vitest'
import { BloomFilter } from '@bloomkit/core'
import { createKeyHasher } from '@bloomkit/core/store'
import { bloomFilterSuite } from '@bloomkit/core/testing'
import { MemoryBitStore, MemoryBloomFilter } from '@bloomkit/memory-backend'

bloomFilterSuite({ test, factory: (parameters) => MemoryBloomFilter.fromParameters(parameters), name: 'MemoryBloomFilter' })

// The base class's own paths (no hooks overridden) over a synchronous store.
bloomFilterSuite({
  test,
  factory: async (parameters) => new BloomFilter(new MemoryBitStore(parameters), await createKeyHasher(parameters.seed)),
  name: 'BloomFilter over MemoryBitStore',
})
