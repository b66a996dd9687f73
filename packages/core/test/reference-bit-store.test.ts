import { test } from 'vitest'
import { BloomFilter } from '@bloomkit/core'
import { createKeyHasher } from '@bloomkit/core/store'
import { bitStoreSuite, bloomFilterSuite, ReferenceBitStore } from '@bloomkit/core/testing'

bitStoreSuite({ test, factory: (parameters) => new ReferenceBitStore(parameters), name: 'ReferenceBitStore' })

// The base class over an asynchronous store: every method through the async driver.
bloomFilterSuite({
  test,
  factory: async (parameters) => new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed)),
  name: 'BloomFilter over ReferenceBitStore',
})
