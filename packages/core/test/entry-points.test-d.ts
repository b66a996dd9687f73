import { expectTypeOf, test } from 'vitest'
import type * as Root from '@bloomkit/core'
import type * as Store from '@bloomkit/core/store'
import type * as Spec from '@bloomkit/core/spec'
import type * as Testing from '@bloomkit/core/testing'

// Each entry point's runtime names, written out: adding or removing one is an API change, and this
// is where it shows. The type-only names are pinned by the `import type` lines below (removing one
// fails to compile).

type UnionToIntersection<U> = (U extends unknown ? (x: () => U) => void : never) extends (x: infer I) => void ? I : never
type LastOf<U> = UnionToIntersection<U> extends () => infer R ? R : never
/** How many members a union of names has. */
type UnionLength<U, Seen extends unknown[] = []> = [U] extends [never] ? Seen['length'] : UnionLength<Exclude<U, LastOf<U>>, [...Seen, 0]>
/** `true` when N <= Max. */
type AtMost<N extends number, Max extends number, Counted extends unknown[] = []> = Counted['length'] extends N ? true : Counted['length'] extends Max ? false : AtMost<N, Max, [...Counted, 0]>

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

test("'@bloomkit/core/store' holds what a backend author needs: at most 40 names, each imported by a backend or tool", () => {
  type Names = keyof typeof Store
  expectTypeOf<Names>().toEqualTypeOf<
    | 'answerEach'
    | 'ArrayProbe'
    | 'CounterProbe'
    | 'crc32'
    | 'checkInteger'
    | 'invalidParameter'
    | 'checkOptionNames'
    | 'createKeyHasher'
    | 'KeyHasher'
    | 'checkParameters'
    | 'formatParameters'
    | 'sameParameters'
    | 'seedNote'
    | 'shardBitsOf'
    | 'shardBytesOf'
    | 'PositionBatch'
    | 'adoptsStored'
    | 'newFilterParameters'
    | 'randomSeed'
    | 'earlierSizeFilter'
    | 'counterShardBytesOf'
    | 'decodeSnapshot'
    | 'SnapshotReader'
    | 'isLayeredOptions'
    | 'orInto'
    | 'popcount'
    | 'SET_BITS'
    | 'TEST_BITS'
    | 'testBitSetBit'
    | 'testOrSetBatch'
    | 'testOrSetGroup'
    | 'testOrSetKey'
    | 'hashSchemes'
    | 'layerPolicies'
    | 'counterKernels'
    | 'snapshotFormat'
    | 'snapshotSources'
    | 'layeredFormat'
    | 'layeredBatch'
    | 'optionChecks'
  >()
  // Issue 21's bound, held on its own so that a name added to the list above shows against it too.
  expectTypeOf<AtMost<UnionLength<Names>, 40>>().toEqualTypeOf<true>()
  // The groups hold what backends import from them, and nothing else.
  expectTypeOf<keyof typeof Store.hashSchemes>().toEqualTypeOf<'HASH_SCHEMES' | 'layoutOfScheme' | 'schemeOf'>()
  expectTypeOf<keyof typeof Store.layerPolicies>().toEqualTypeOf<'checkPolicyKind' | 'layerCapacity' | 'layerErrorRate' | 'layerParameters' | 'layerPolicyOf' | 'maxWindow'>()
  expectTypeOf<keyof typeof Store.snapshotFormat>().toEqualTypeOf<
    'COUNTING_SNAPSHOT_VERSION' | 'decodeSnapshotHeader' | 'encodeSnapshotHeader' | 'encodeCountingHeader' | 'readParameterFields' | 'SNAPSHOT_HEADER_BYTES' | 'writeParameterFields'
  >()
  expectTypeOf<keyof typeof Store.snapshotSources>().toEqualTypeOf<'snapshotChunks' | 'peekKind' | 'peekVersion' | 'snapshotReader' | 'wholeSnapshot'>()
  expectTypeOf<keyof typeof Store.layeredFormat>().toEqualTypeOf<
    'decodeLayeredSnapshot' | 'encodeLayeredSnapshot' | 'LAYERED_SNAPSHOT_VERSION' | 'snapshotVersionOf' | 'layerSnapshotOf' | 'snapshotLayerEntries'
  >()
  expectTypeOf<keyof typeof Store.layeredBatch>().toEqualTypeOf<'hashPairs' | 'layerBatch' | 'keyBatches' | 'pairsAgree'>()
  expectTypeOf<keyof typeof Store.optionChecks>().toEqualTypeOf<'checkBoolean' | 'checkCountingCreate' | 'checkCreateKind'>()
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
