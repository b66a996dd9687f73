import { checkKeys } from '../errors.js'
import type { BloomKey, KeyHasher } from '../hashing/key-hasher.js'
import type { FilterParameters } from '../parameters.js'
import { PositionBatch } from '../bits/position-batch.js'
import { positionsOf, shardOf } from '../bits/positions.js'

/**
 * What asynchronous layered filters (LevelDB, Redis) share: a batch of keys is hashed once into
 * pairs, and each layer's positions are derived from those pairs (docs/SPEC.md, section 8).
 */

/** Keys per KeyHasher.hashMany call in {@link hashPairs}. */
const HASH_RUN = 1024

/** The keys' hash pairs: key i's a at [2i], b at [2i + 1]; hashed a run at a time (KeyHasher.hashMany, issue 36). */
export function hashPairs(hasher: KeyHasher, keys: readonly BloomKey[]): Uint32Array {
  const pairs = new Uint32Array(keys.length * 2)
  // hashMany writes the lanes as signed words: the same bits, read back unsigned through `pairs`.
  const signed = new Int32Array(pairs.buffer)
  for (let from = 0; from < keys.length; from += HASH_RUN) {
    const count = Math.min(HASH_RUN, keys.length - from)
    hasher.hashMany(keys, from, count, signed.subarray(2 * from, 2 * (from + count)))
  }
  return pairs
}

/**
 * The positions, in a layer with `parameters`, of the keys whose pairs are in `pairs`: all of them,
 * or those at `indexes` (in that order, slot j holding key indexes[j]).
 */
export function layerBatch(parameters: FilterParameters, pairs: Uint32Array, indexes?: readonly number[]): PositionBatch {
  const { shards, hashes } = parameters
  const shardBits = parameters.bits / shards
  const fill = positionsOf(parameters.scheme)
  const size = indexes === undefined ? pairs.length / 2 : indexes.length
  const batch = new PositionBatch(size, hashes)
  for (let slot = 0; slot < size; slot++) {
    const i = indexes === undefined ? slot : indexes[slot]
    const a = pairs[2 * i]
    const b = pairs[2 * i + 1]
    batch.shards[slot] = shardOf(a, b, shards)
    fill(a, b, shardBits, hashes, batch.positions, slot * hashes)
    batch.pairs[2 * slot] = a
    batch.pairs[2 * slot + 1] = b
  }
  batch.size = size
  return batch
}

/** `keys` in arrays of at most `size`, for one store round trip each. @throws TypeError unless `keys` is iterable. */
export function* keyBatches(keys: Iterable<BloomKey>, size: number): Generator<BloomKey[]> {
  checkKeys(keys)
  let batch: BloomKey[] = []
  for (const key of keys) {
    batch.push(key)
    if (batch.length === size) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}

/**
 * Whether key `index` of `batch` has the shard and positions its hash pair gives under
 * `parameters`: a store that records the pairs of the keys it adds (a Redis filter with a feed,
 * docs/SPEC.md 9.12) checks a batch's first key with it, so that a batch built by hand, its
 * `pairs` left unfilled, is refused rather than recorded as other keys.
 */
export function pairsAgree(parameters: FilterParameters, batch: PositionBatch, index: number): boolean {
  const { shards, hashes } = parameters
  const a = batch.pairs[2 * index]
  const b = batch.pairs[2 * index + 1]
  if (shardOf(a, b, shards) !== batch.shards[index]) return false
  const expected = new Uint32Array(hashes)
  positionsOf(parameters.scheme)(a, b, parameters.bits / shards, hashes, expected, 0)
  for (let i = 0; i < hashes; i++) if (expected[i] !== batch.positions[index * hashes + i]) return false
  return true
}
