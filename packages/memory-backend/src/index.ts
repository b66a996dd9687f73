export { MemoryBitStore } from './memory-bit-store.js'
export { MemoryBloomFilter } from './memory-bloom-filter.js'
