export { LevelBloomFilter, type LevelCreateOptions, type LevelImportOptions, type LevelOpenOptions } from './level-bloom-filter.js'
export { LevelBitStore, type LevelCreateStoreOptions, type LevelStoreOptions } from './level-bit-store.js'
export type { SnapshotSource } from './import-snapshot.js'
export { DEFAULT_PAGE_BYTES, MAX_PAGE_BYTES, MIN_PAGE_BYTES } from './layout.js'
