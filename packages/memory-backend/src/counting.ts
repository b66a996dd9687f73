/**
 * `@bloomkit/memory-backend/counting`: counting Bloom filters in memory, which can remove keys. An
 * entry of its own, so that the plain filter's browser bundle carries none of it.
 */
export { CountingMemoryFilter } from './counting-memory-filter.js'
export { MemoryCounterStore } from './memory-counter-store.js'
