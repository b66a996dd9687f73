import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { countingFilterSuite } from '../../../test-support/counting-suite.js'

countingFilterSuite({
  name: 'memory',
  create: (parameters) => CountingMemoryFilter.fromParameters(parameters),
  createPlain: (parameters) => MemoryBloomFilter.fromParameters(parameters),
  importCounting: (snapshot) => CountingMemoryFilter.import(snapshot),
  runs: 150,
  fpr: { capacity: 100_000, probes: 400_000 },
})
