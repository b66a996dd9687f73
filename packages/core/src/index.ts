/**
 * `@bloomkit/core`: what users call. A filter (`BloomFilter`, made by a backend's `create`),
 * sizing, errors and the key type. What a backend author needs is in `@bloomkit/core/store`; the
 * hashing and position primitives of docs/SPEC.md are in `@bloomkit/core/spec`; the conformance
 * suites are in `@bloomkit/core/testing`.
 */
export { BloomFilter } from './bloom-filter.js'
export { CountingBloomFilter, type CounterReport } from './counting/counting-bloom-filter.js'
export { LayeredFilter, type LayeredFilterOptions } from './layered/layered-filter.js'
export type { Outcome } from './bit-store.js'
export { BloomError, isBloomError, type BloomErrorCode } from './errors.js'
export type { BloomKey } from './hashing/key-hasher.js'
export { MAX_HASHES, MAX_SHARD_BITS, MAX_SHARDS, type BitLayout, type FilterParameters, type FilterParametersInput, type HashScheme } from './parameters.js'
export {
  BLOCKED_MAX_OVERHEAD,
  estimateErrorRate,
  optimalCapacity,
  optimalParameters,
  sizeFilter,
  type CapacityOptions,
  type Dimensions,
  type ErrorRateOptions,
} from './sizing.js'
export type { LayerInfo } from './layered/layer-policy.js'
export type { LayeredOptions, RotatingOptions, ScalableOptions, SizingOptions, WindowOptions } from './options.js'
