/**
 * `@bloomkit/memory-backend/layered`: filters that grow or forget, in memory. An entry of its own,
 * so that the fixed filter's entry (and a browser bundle of it) carries no layered code.
 */
export { LayeredMemoryFilter, type LayeredMemoryImportOptions } from './layered-memory-filter.js'
export { MemoryBloomFilter } from './memory-bloom-filter.js'
export type { LayeredOptions, LayerInfo, RotatingOptions, ScalableOptions, WindowOptions } from '@bloomkit/core'
