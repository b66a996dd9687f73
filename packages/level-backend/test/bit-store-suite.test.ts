import { afterAll, test } from 'vitest'
import { bitStoreSuite } from '@bloomkit/core/testing'
import { LevelBitStore } from '@bloomkit/level-backend'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

// A temp folder per store; pages of 1 KiB and a 4-page cache, so the suite's larger batches also
// run the path that works through the pages a cacheful at a time.
bitStoreSuite({
  test,
  name: 'LevelBitStore (1 KiB pages, 4 KiB cache)',
  factory: (parameters) => LevelBitStore.create(folders.path(), parameters, { pageBytes: 1024, cacheBytes: 4096 }),
  reopen: (store) => LevelBitStore.open((store as LevelBitStore).location, { cacheBytes: 4096 }),
  cleanup: () => folders.removeAll(),
})

bitStoreSuite({
  test,
  name: 'LevelBitStore (defaults)',
  factory: (parameters) => LevelBitStore.create(folders.path(), parameters),
  reopen: (store) => LevelBitStore.open((store as LevelBitStore).location),
  cleanup: () => folders.removeAll(),
})
