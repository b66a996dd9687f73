export {
  bitStoreContractTests,
  bitStorePersistenceTests,
  bitStoreSharingTests,
  bitStoreSuite,
  type BitStoreSuiteOptions,
  type TestFunction,
} from './bit-store-suite.js'
export { bloomFilterSuite, type BloomFilterSuiteOptions } from './bloom-filter-suite.js'
export { ReferenceBitStore } from './reference-bit-store.js'
export { ReferenceCounterStore } from './reference-counter-store.js'
export { layeredFilterSuite, type LayeredFilterSuiteOptions } from './layered-filter-suite.js'
