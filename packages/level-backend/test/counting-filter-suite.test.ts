import { afterAll } from 'vitest'
import { CountingLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { countingFilterSuite } from '../../../test-support/counting-suite.js'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders('bloomkit-counting-')
afterAll(() => folders.removeAll())

countingFilterSuite({
  name: 'LevelDB',
  create: (parameters) => CountingLevelFilter.fromParameters(folders.path(), parameters),
  createPlain: async (parameters) => (await LevelBloomFilter.import(folders.path(), (await (await import('@bloomkit/memory-backend')).MemoryBloomFilter.fromParameters(parameters)).export(), { kind: 'fixed' })),
  importCounting: (snapshot) => CountingLevelFilter.import(folders.path(), snapshot),
  runs: 25,
  fpr: { capacity: 20_000, probes: 200_000 },
})
