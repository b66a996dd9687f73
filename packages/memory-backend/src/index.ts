export { MemoryBitStore } from './memory-bit-store.js'
export { MemoryBloomFilter } from './memory-bloom-filter.js'
// What every user of this backend needs from core, so that installing this one package is enough.
export { BloomError, isBloomError, optimalParameters, sizeFilter, type BloomErrorCode, type BloomKey, type FilterParameters } from '@bloomkit/core'
