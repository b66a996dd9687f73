/**
 * `@bloomkit/core/spec`: the hashing and position primitives that docs/SPEC.md defines, for tests,
 * benchmarks and ports to other languages that want to check themselves against this one.
 *
 * **No stability promise.** These names and signatures may change in any release, minor ones
 * included. What is stable is the format they compute (docs/SPEC.md and its test vectors): a
 * change there is a new hash scheme or snapshot version, never an edit of an existing one.
 */
export { ENCODE_MIN_STRING_LENGTH, LANE_B_SEED_XOR, loadWasmHasher, WASM_MIN_BYTE_LENGTH, WASM_MIN_STRING_LENGTH, wasmHashingSafe } from './hashing/key-hasher.js'
export { BLOCK_BITS, blockIndex, blockStart, fillBlockedPositions, fillPositions, fillRemixedPositions, fmix32, positionsOf, PROBE_STEP, scaleToShard, shardOf } from './bits/positions.js'
export { encodeUtf8, xxh32PairAscii, xxh32PairBytes, xxh32PairWords } from './hashing/xxhash32.js'
export { compileWasmXxh32, type WasmXxh32 } from './hashing/xxhash32-wasm.js'
