export { LevelBloomFilter, type LevelCreateOptions, type LevelImportOptions, type LevelOpenOptions } from './level-bloom-filter.js'
export { LevelBitStore } from './level-bit-store.js'
export type { LevelCreateStoreOptions, LevelStoreOptions } from './options.js'
export type { SnapshotSource } from './import.js'
