// What a filter's set bits say (docs/SPEC.md section 6): how many keys it holds and how likely a
// false positive is now. Read from one pass over the bits (the store's countBits), by
// estimateCount, errorRate and every snapshot header's items field.
import { shardBitsOf, type FilterParameters } from './parameters.js'
import { blockedErrorRate } from './sizing.js'

/** The items estimate of docs/SPEC.md section 6 from set bits (non-zero counters) per shard. */
export function itemsFromSetBits(counts: ArrayLike<number>, parameters: FilterParameters): number {
  const m = shardBitsOf(parameters)
  const k = parameters.hashes
  let total = 0
  for (let s = 0; s < counts.length; s++) {
    // A full shard would give infinity; half a bit short of full keeps the estimate finite.
    const set = Math.min(counts[s], m - 0.5)
    total += (-m / k) * Math.log1p(-set / m)
  }
  return Math.round(total)
}

/**
 * The false-positive probability of a `has` at this fill: for a classic filter the mean over shards
 * of fill^k; for a blocked one the model's rate at the estimated count.
 */
export function errorRateFromSetBits(counts: ArrayLike<number>, parameters: FilterParameters): number {
  const { bits, hashes } = parameters
  if (parameters.layout === 'blocked') return blockedErrorRate(bits, hashes, itemsFromSetBits(counts, parameters))
  const shardBits = shardBitsOf(parameters)
  let total = 0
  for (let s = 0; s < counts.length; s++) total += Math.pow(counts[s] / shardBits, hashes)
  return total / counts.length
}
