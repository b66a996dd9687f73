/**
 * `@bloomkit/core/store`: what a backend author needs to build a {@link BitStore} and a backend
 * package around it. The contract and its capabilities, the hashed batch a store receives, the
 * snapshot reader and writer, the shared checks, bit kernels and chunking, and the keyed hasher
 * a backend's `create` makes for the filter. Users of a filter need none of these.
 */
export { answerEach } from './answer-each.js'
export type { BitStore, BitStoreCapabilities } from './bit-store.js'
export { orInto, popcount, SET_BITS, TEST_BITS, testBitSetBit, testOrSetBatch, testOrSetGroup, testOrSetKey, type BitMode } from './bit-kernels.js'
export { CHUNK_BYTES, snapshotChunks, type ShardRange, type SnapshotSource } from './chunks.js'
export { peekVersion, wholeSnapshot } from './snapshot-source.js'
export { crc32 } from './crc32.js'
export { checkBoolean, checkInteger, checkObject, invalidParameter } from './errors.js'
export { checkOptionNames, type OptionGroup } from './option-names.js'
export type { SyncAsync } from './sync-async.js'
export { createKeyHasher, KeyHasher } from './key-hasher.js'
export {
  assertSameParameters,
  checkParameters,
  formatParameters,
  HASH_SCHEMES,
  layoutOfScheme,
  schemeOf,
  sameParameters,
  seedNote,
  shardBitsOf,
  shardBytesOf,
} from './parameters.js'
export { PositionBatch, type ShardGroup } from './position-batch.js'
export { adoptsStored, earlierSizes, newFilterParameters, randomSeed, type NewFilter } from './seed.js'
export { earlierSizeFilter } from './sizing.js'
export { ArrayProbe } from './probe.js'
export { CounterProbe } from './counter-probe.js'
export {
  addCounters,
  counterAt,
  counterBatch,
  countCounters,
  COUNTER_BITS,
  decrementKey,
  incrementKey,
  plainBitsOf,
  testKeyCounters,
  type CounterMode,
} from './counter-kernels.js'
export { counterShardBytesOf, encodeCountingHeader, type CounterStore } from './counting-bloom-filter.js'
export {
  decodeSnapshot,
  decodeSnapshotHeader,
  encodeSnapshotHeader,
  readParameterFields,
  SNAPSHOT_HEADER_BYTES,
  COUNTING_SNAPSHOT_VERSION,
  snapshotBytes,
  type SnapshotKind,
  SnapshotReader,
  writeParameterFields,
  type PayloadChunk,
  type SnapshotHeader,
} from './snapshot.js'
export {
  checkPolicyKind,
  compoundErrorRate,
  isLayeredOptions,
  layerCapacity,
  layerErrorRate,
  modelRate,
  layerParameters,
  layerPolicyOf,
  windowOf,
  type LayerPolicy,
} from './layer-policy.js'
export {
  decodeLayeredSnapshot,
  encodeLayeredSnapshot,
  LAYERED_SNAPSHOT_VERSION,
  snapshotVersionOf,
  type LayeredSnapshot,
  type LayerToWrite,
  type SnapshotLayer,
} from './layered-snapshot.js'
export { hashPairs, keyBatches, layerBatch } from './layered-batch.js'
export {
  layerSnapshotOf,
  snapshotLayerEntries,
  type DropReason,
  type LayerEntry,
  type LayersAnswer,
  type LayerStorage,
  type StoredLayer,
} from './layer-storage.js'
