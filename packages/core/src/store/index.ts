/**
 * `@bloomkit/core/store`: what a backend author needs to build a {@link BitStore} and a backend
 * package around it, and nothing a backend does not import. The contract and its capabilities,
 * the hashed batch a store receives, the keyed hasher a backend's `create` makes for the filter,
 * the shared checks and sizing, and, grouped by job, the bit and counter kernels, the snapshot
 * formats and sources, and the per-layer batches of a layered filter. Users of a filter need none
 * of these.
 */
export { answerEach } from '../answer-each.js'
export type { BitStore, BitStoreCapabilities } from '../bit-store.js'
export { orInto, popcount, SET_BITS, TEST_BITS, testBitSetBit, testOrSetBatch, testOrSetGroup, testOrSetKey, type BitMode } from '../bits/bit-kernels.js'
export type { ShardRange, SnapshotSource } from '../format/chunks.js'
export { crc32 } from '../format/crc32.js'
export { checkInteger, invalidParameter } from '../errors.js'
export { checkOptionNames, type OptionGroup } from '../option-names.js'
export type { SyncAsync } from '../sync-async.js'
export { createKeyHasher, KeyHasher } from '../hashing/key-hasher.js'
export { checkParameters, formatParameters, sameParameters, seedNote, shardBitsOf, shardBytesOf } from '../parameters.js'
export { PositionBatch, type ShardGroup } from '../bits/position-batch.js'
export { adoptsStored, newFilterParameters, randomSeed, type NewFilter } from '../new-filter.js'
export { earlierSizeFilter } from '../sizing.js'
export { ArrayProbe } from '../bits/probe.js'
export { CounterProbe } from '../counting/counter-probe.js'
export type { CounterMode } from '../counting/counter-kernels.js'
export { counterShardBytesOf, type CounterStore } from '../counting/counting-bloom-filter.js'
export { decodeSnapshot, type SnapshotKind, SnapshotReader, type PayloadChunk, type SnapshotHeader } from '../format/snapshot.js'
export { isLayeredOptions, type LayerPolicy } from '../layered/layer-policy.js'
export type { LayeredSnapshot, LayerToWrite, SnapshotLayer } from '../format/layered-snapshot.js'
export type { DropReason, LayerEntry, LayersAnswer, LayerStorage, StoredLayer } from '../layered/layer-storage.js'

/** The hash scheme numbers stored filters record (docs/SPEC.md section 4), and their layouts. */
export * as hashSchemes from './hash-schemes.js'
/** A layered filter's policy: read from options or a stored record, and each layer's capacity, rate and parameters. */
export * as layerPolicies from './layer-policies.js'
/** The 4-bit counters of a counting filter: increment, decrement, test, count, add, and their plain bits. */
export * as counterKernels from '../counting/counter-kernels.js'
/** The snapshot header and its parameter fields, written and read field by field. */
export * as snapshotFormat from './snapshot-format.js'
/** A snapshot as bytes or a stream of chunks: chunked, whole, or its version first. */
export * as snapshotSources from './snapshot-sources.js'
/** Layered snapshots and their layers handed to a backend's storage. */
export * as layeredFormat from './layered-format.js'
/** Value checks of options that backends share: booleans, and the `kind` an open or import insists on. */
export * as optionChecks from './option-checks.js'
/** A batch of keys hashed once and turned into each layer's positions. */
export * as layeredBatch from '../layered/layered-batch.js'
