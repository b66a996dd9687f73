import { expectTypeOf, test } from 'vitest'
import type * as Root from '@bloomkit/core'
import type * as Store from '@bloomkit/core/store'
import type * as Spec from '@bloomkit/core/spec'
import type * as Testing from '@bloomkit/core/testing'

// Each entry point's runtime names, written out: adding or removing one is an API change, and this
// is where it shows. The type-only names are pinned by the `import type` lines below (removing one
// fails to compile).

test("'@bloomkit/core' holds what users call: the filter, sizing, errors and limits", () => {
  expectTypeOf<keyof typeof Root>().toEqualTypeOf<
    | 'BloomFilter'
    | 'CountingBloomFilter'
    | 'LayeredFilter'
    | 'BloomError'
    | 'isBloomError'
    | 'MAX_HASHES'
    | 'MAX_SHARD_BITS'
    | 'MAX_SHARDS'
    | 'BLOCKED_MAX_OVERHEAD'
    | 'estimateErrorRate'
    | 'optimalCapacity'
    | 'optimalParameters'
    | 'sizeFilter'
  >()
  type Types = [
    Root.Outcome<true, void>,
    Root.CounterReport,
    Root.BloomErrorCode,
    Root.BloomKey,
    Root.BitLayout,
    Root.FilterParameters,
    Root.FilterParametersInput,
    Root.CapacityOptions,
    Root.Dimensions,
    Root.ErrorRateOptions,
    Root.SizingOptions,
    Root.LayeredOptions,
    Root.LayerInfo,
    Root.RotatingOptions,
    Root.ScalableOptions,
    Root.WindowOptions,
  ]
  expectTypeOf<Types>().not.toBeNever()
})

test("'@bloomkit/core/store' holds what a backend author needs", () => {
  expectTypeOf<keyof typeof Store>().toEqualTypeOf<
    | 'answerEach'
    | 'ArrayProbe'
    | 'adoptsStored'
    | 'earlierSizes'
    | 'earlierSizeFilter'
    | 'newFilterParameters'
    | 'randomSeed'
    | 'orInto'
    | 'popcount'
    | 'SET_BITS'
    | 'TEST_BITS'
    | 'testBitSetBit'
    | 'testOrSetBatch'
    | 'testOrSetGroup'
    | 'testOrSetKey'
    | 'CHUNK_BYTES'
    | 'snapshotChunks'
    | 'peekVersion'
    | 'wholeSnapshot'
    | 'crc32'
    | 'checkBoolean'
    | 'checkInteger'
    | 'checkObject'
    | 'invalidParameter'
    | 'checkOptionNames'
    | 'createKeyHasher'
    | 'KeyHasher'
    | 'assertSameParameters'
    | 'checkParameters'
    | 'formatParameters'
    | 'HASH_SCHEMES'
    | 'layoutOfScheme'
    | 'schemeOf'
    | 'sameParameters'
    | 'seedNote'
    | 'shardBitsOf'
    | 'shardBytesOf'
    | 'PositionBatch'
    | 'decodeSnapshot'
    | 'decodeSnapshotHeader'
    | 'encodeSnapshotHeader'
    | 'readParameterFields'
    | 'SNAPSHOT_HEADER_BYTES'
    | 'snapshotBytes'
    | 'SnapshotReader'
    | 'writeParameterFields'
    | 'checkPolicyKind'
    | 'compoundErrorRate'
    | 'isLayeredOptions'
    | 'layerCapacity'
    | 'layerErrorRate'
    | 'modelRate'
    | 'layerParameters'
    | 'layerPolicyOf'
    | 'windowOf'
    | 'decodeLayeredSnapshot'
    | 'encodeLayeredSnapshot'
    | 'LAYERED_SNAPSHOT_VERSION'
    | 'snapshotVersionOf'
    | 'hashPairs'
    | 'keyBatches'
    | 'layerBatch'
    | 'CounterProbe'
    | 'addCounters'
    | 'counterAt'
    | 'counterBatch'
    | 'countCounters'
    | 'COUNTER_BITS'
    | 'decrementKey'
    | 'incrementKey'
    | 'plainBitsOf'
    | 'testKeyCounters'
    | 'encodeCountingHeader'
    | 'counterShardBytesOf'
    | 'COUNTING_SNAPSHOT_VERSION'
    | 'layerSnapshotOf'
    | 'snapshotLayerEntries'
  >()
  type Types = [
    Store.BitStore,
    Store.BitStoreCapabilities,
    Store.BitMode,
    Store.ShardGroup,
    Store.ShardRange,
    Store.SnapshotSource,
    Store.SyncAsync<true>,
    Store.PayloadChunk,
    Store.SnapshotHeader,
    Store.LayerPolicy,
    Store.LayeredSnapshot,
    Store.LayerToWrite,
    Store.SnapshotLayer,
    Store.CounterStore,
    Store.CounterMode,
    Store.SnapshotKind,
  ]
  expectTypeOf<Types>().not.toBeNever()
})

test("'@bloomkit/core/spec' holds the hashing and position primitives of docs/SPEC.md", () => {
  expectTypeOf<keyof typeof Spec>().toEqualTypeOf<
    | 'compileWasmXxh32'
    | 'LANE_B_SEED_XOR'
    | 'loadWasmHasher'
    | 'WASM_MIN_BYTE_LENGTH'
    | 'WASM_MIN_STRING_LENGTH'
    | 'wasmHashingSafe'
    | 'BLOCK_BITS'
    | 'blockIndex'
    | 'blockStart'
    | 'fillBlockedPositions'
    | 'fillPositions'
    | 'fillRemixedPositions'
    | 'fmix32'
    | 'positionsOf'
    | 'PROBE_STEP'
    | 'scaleToShard'
    | 'shardOf'
    | 'xxh32PairAscii'
    | 'xxh32PairBytes'
    | 'xxh32PairWords'
    | 'encodeUtf8'
    | 'ENCODE_MIN_STRING_LENGTH'
  >()
})

test("'@bloomkit/core/testing' holds the conformance suites", () => {
  expectTypeOf<keyof typeof Testing>().toEqualTypeOf<
    | 'bitStoreSuite'
    | 'bitStoreContractTests'
    | 'bitStorePersistenceTests'
    | 'bitStoreSharingTests'
    | 'bloomFilterSuite'
    | 'layeredFilterSuite'
    | 'ReferenceBitStore'
    | 'ReferenceCounterStore'
  >()
  type Types = [Testing.BitStoreSuiteOptions, Testing.BloomFilterSuiteOptions, Testing.TestFunction]
  expectTypeOf<Types>().not.toBeNever()
})
