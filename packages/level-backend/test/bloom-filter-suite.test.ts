import { afterAll, test } from 'vitest'
import { BloomFilter } from '@bloomkit/core'
import { createKeyHasher } from '@bloomkit/core/store'
import { bloomFilterSuite } from '@bloomkit/core/testing'
import { LevelBitStore } from '@bloomkit/level-backend'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

// The filter API over LevelDB, checked bit for bit against core's reference filter. LevelBloomFilter
// adds no behaviour to BloomFilter (only static constructors, flush and accessors), so the suite
// runs the class over the store with the exact parameters it asks for; 1 KiB pages and a 4-page
// cache so that pages move through the cache during the suite.
bloomFilterSuite({
  test,
  name: 'BloomFilter over LevelBitStore (1 KiB pages, 4 KiB cache)',
  factory: async (parameters) =>
    new BloomFilter(await LevelBitStore.create(folders.path(), parameters, { pageBytes: 1024, cacheBytes: 4096 }), await createKeyHasher(parameters.seed)),
  cleanup: () => folders.removeAll(),
})
