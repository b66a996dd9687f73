export { bitStoreSuite, type BitStoreSuiteOptions, type TestFunction } from './bit-store-suite.js'
export { ReferenceBitStore } from './reference-bit-store.js'
