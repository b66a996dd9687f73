export { BloomFilter } from './bloom-filter.js'
export type { BitStore, BitStoreCapabilities, Outcome } from './bit-store.js'
export { crc32 } from './crc32.js'
export { BloomError, type BloomErrorCode } from './errors.js'
export { createKeyHasher, KeyHasher, LANE_B_SEED_XOR, loadWasmHasher, WASM_MIN_BYTE_LENGTH, WASM_MIN_STRING_LENGTH, wasmHashingSafe, type BloomKey } from './key-hasher.js'
export {
  assertSameParameters,
  BLOCKED_MAX_OVERHEAD,
  checkParameters,
  formatParameters,
  HASH_SCHEMES,
  layoutOfScheme,
  MAX_HASHES,
  MAX_SHARD_BITS,
  MAX_SHARDS,
  sameParameters,
  shardBitsOf,
  shardBytesOf,
  sizeFilter,
  type BitLayout,
  type FilterParameters,
  type FilterParametersInput,
  type SizingOptions,
} from './parameters.js'
export { PositionBatch, type ShardGroup } from './position-batch.js'
export { BLOCK_BITS, blockIndex, blockStart, fillBlockedPositions, fillPositions, positionsOf, PROBE_STEP, scaleToShard, shardOf } from './positions.js'
export {
  estimateErrorRate,
  optimalCapacity,
  optimalParameters,
  type CapacityOptions,
  type Dimensions,
  type ErrorRateOptions,
} from './sizing.js'
export {
  decodeSnapshot,
  decodeSnapshotHeader,
  encodeSnapshotHeader,
  SNAPSHOT_HEADER_BYTES,
  SNAPSHOT_TRAILER_BYTES,
  SNAPSHOT_VERSION,
  readParameterFields,
  snapshotBytes,
  SnapshotReader,
  writeParameterFields,
  type PayloadChunk,
  type SnapshotHeader,
} from './snapshot.js'
export { xxh32PairAscii, xxh32PairBytes } from './xxhash32.js'
