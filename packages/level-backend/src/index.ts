export { LevelBloomFilter, type LevelCreateOptions, type LevelFilterKind, type LevelImportOptions, type LevelOpenOptions } from './level-bloom-filter.js'
export { LevelBitStore } from './level-bit-store.js'
export { CountingLevelFilter } from './counting/counting-level-filter.js'
export { LayeredLevelFilter, type LayeredLevelOpenOptions, type LayeredLevelOptions } from './layered/layered-level-filter.js'
export type { LevelCreateStoreOptions, LevelStoreOptions } from './options.js'
export type { SnapshotSource } from './folder/import.js'
// What every user of this backend needs from core, so that installing this one package is enough.
export { BloomError, isBloomError, optimalParameters, sizeFilter, type BloomErrorCode, type BloomKey, type FilterParameters } from '@bloomkit/core'
