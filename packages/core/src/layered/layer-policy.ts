import { BloomError, checkInteger, invalidParameter } from '../errors.js'
import { checkLayout, checkParameters, MAX_HASHES, MAX_SHARD_BITS, MAX_SHARDS, shardBitsOf, type FilterParameters, type BitLayout } from '../parameters.js'
import { checkWindow } from '../option-names.js'
import { checkClockOption, checkTightening, MAX_GROWTH } from '../option-values.js'
import { BLOCK_BITS } from '../bits/positions.js'
import { randomSeed } from '../new-filter.js'
import type { LayeredOptions, RotatingOptions } from '../options.js'
import { checkErrorRate, estimateErrorRate, guavaHashes, sizeFilter } from '../sizing.js'

/** The tightening ratio r of a layered filter when none is given (docs/SPEC.md, section 8). */
export const DEFAULT_TIGHTENING = 0.5
export { MAX_GROWTH } from '../option-values.js'


export { isLayeredOptions } from '../option-values.js'

/**
 * Everything that decides a layered filter's layers, as its snapshot (format version 2) and the
 * backends' metadata record it.
 */
export interface LayerPolicy {
  readonly kind: 'scalable' | 'rotating'
  /** Keys the first layer (of each window) takes before the next one is added. */
  readonly capacity: number
  /** The bound on the whole filter's false-positive rate. */
  readonly errorRate: number
  /** 1 … 65 536; 0 only for a rotating filter whose windows do not grow. */
  readonly growth: number
  /** r in (0, 1). */
  readonly tightening: number
  /** Window length in seconds (rotating), 0 for scalable. */
  readonly seconds: number
  /** Windows checked (rotating), 0 for scalable. */
  readonly keep: number
  /** Every layer's seed: the same, so that a key is hashed once for all layers. */
  readonly seed: number
  /** The layout of new layers; undefined lets sizing choose per layer. */
  readonly layout: BitLayout | undefined
  /** The shards of new layers; undefined lets sizing choose per layer. */
  readonly shards: number | undefined
}

/**
 * Validates layered options and returns the policy they describe.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
 */
export function layerPolicyOf(options: LayeredOptions): LayerPolicy {
  if (options === null || typeof options !== 'object') throw invalidParameter('options', 'an object', options)
  const rotating = (options as RotatingOptions).window !== undefined
  const capacity = checkInteger('capacity', options.capacity, 1, Number.MAX_SAFE_INTEGER)
  const errorRate = checkErrorRate('errorRate', options.errorRate)
  const growth =
    options.growth === undefined && rotating ? 0 : checkInteger('growth', options.growth, 1, MAX_GROWTH)
  const tightening = options.tightening === undefined ? DEFAULT_TIGHTENING : checkTightening(options.tightening)
  const { seconds, keep } = rotating ? checkWindow((options as RotatingOptions).window) : { seconds: 0, keep: 0 }
  const clock = (options as RotatingOptions).clock
  if (clock !== undefined) checkClockOption(clock)
  const policy: LayerPolicy = {
    kind: rotating ? 'rotating' : 'scalable',
    capacity,
    errorRate,
    growth,
    tightening,
    seconds,
    keep,
    // Without a seed, a secret random one, as for fixed filters: with a known seed an attacker who can
    // add keys can make a chosen absent key read present (docs/RELIABILITY.md).
    seed: options.seed === undefined ? randomSeed() : checkInteger('seed', options.seed, 0, 0xffffffff),
    layout: options.layout === undefined ? undefined : checkLayout(options.layout),
    shards: options.shards === undefined ? undefined : checkInteger('shards', options.shards, 1, MAX_SHARDS),
  }
  layerParameters(policy, 0) // the first layer must be sizeable, so that a bad capacity fails at create
  return policy
}

/**
 * Asserts that a stored policy name is one this release knows, before anything reads the rest of
 * the policy: an unknown one (a later release's) must not be read as a scalable filter.
 * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` naming `what` and the known policies.
 */
export function checkPolicyKind(kind: unknown, what: string): 'scalable' | 'rotating' {
  if (kind === 'scalable' || kind === 'rotating') return kind
  throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${what} uses layered policy ${JSON.stringify(kind)}; this release knows "scalable" and "rotating"`)
}

/**
 * Keys layer `index` takes before the next is added: `capacity × growth^index`, `index` counting
 * within its window for a rotating filter (and always 0 for one that does not grow).
 */
export function layerCapacity(policy: LayerPolicy, index: number): number {
  if (policy.growth === 0) return policy.capacity
  return Math.min(policy.capacity * Math.pow(policy.growth, index), Number.MAX_SAFE_INTEGER)
}

/**
 * The error rate layer `index` is sized for: the filter's budget `errorRate` (a rotating filter's:
 * `errorRate / keep` per window) times (1 − r)·r^index; a window that never grows gets all of it.
 * The layers' rates sum to less than the budget, so by the union bound a `has` that checks them all
 * errs with probability below it.
 */
export function layerErrorRate(policy: LayerPolicy, index: number): number {
  const budget = policy.kind === 'rotating' ? policy.errorRate / policy.keep : policy.errorRate
  if (policy.growth === 0) return budget
  return budget * (1 - policy.tightening) * Math.pow(policy.tightening, index)
}

/**
 * The parameters of layer `index`: `sizeFilter` at {@link layerCapacity} and
 * {@link layerErrorRate}, with the policy's seed, layout and shards, then grown in 0.1 % steps while
 * its expected rate at capacity (`estimateErrorRate`) is above the layer's rate. Rates so small that
 * Guava's formula asks for more than 64 hashes (below about 1e-19, reached only by filters that
 * grow by 1 or with r near 0 after tens of layers) get a classic layer with 64 hashes and as many
 * bits as reach the rate.
 * @param capacity Keys the layer takes, if not the policy's (a layer rebuilt to fit a key set).
 * @param maxShardBits The most bits a shard may hold (a backend's limit), unless the policy fixes `shards`.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` when the layer cannot be sized at all.
 */
export function layerParameters(policy: LayerPolicy, index: number, capacity = layerCapacity(policy, index), maxShardBits?: number): FilterParameters {
  const base = sizeLayer(policy, index, capacity)
  // A backend that limits a shard's bits (Redis: 4 MiB, as a fixed Redis filter) gets as many
  // shards as keep each within the limit, unless the policy fixes them.
  if (maxShardBits === undefined || policy.shards !== undefined || shardBitsOf(base) <= maxShardBits) return base
  let shards = Math.ceil(base.bits / maxShardBits)
  let parameters = sizeLayer({ ...policy, shards }, index, capacity)
  while (shardBitsOf(parameters) > maxShardBits) parameters = sizeLayer({ ...policy, shards: ++shards }, index, capacity)
  return parameters
}

function sizeLayer(policy: LayerPolicy, index: number, capacity: number): FilterParameters {
  capacity = Math.ceil(capacity)
  const errorRate = layerErrorRate(policy, index)
  if (!(errorRate > 0)) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `layer ${index} would need an error rate below the smallest double; use a larger growth or tightening`)
  }
  const { seed, layout, shards } = policy
  let parameters =
    guavaHashes(capacity, errorRate) <= MAX_HASHES
      ? sizeFilter({ capacity, errorRate, seed, layout, shards })
      : sizeAtMostHashes(capacity, errorRate, seed, shards)
  // Guava's sizing lands within about 1 % of its target either way; a layer must not land above
  // its share, or the shares could sum past errorRate. So grow it in 0.1 % steps until it meets it.
  const multiple = parameters.layout === 'blocked' ? BLOCK_BITS : 8
  while (modelRate(parameters, capacity) > errorRate) {
    const shardBits = parameters.bits / parameters.shards
    const grown = shardBits + Math.max(multiple, Math.ceil((shardBits * 0.001) / multiple) * multiple)
    if (grown > MAX_SHARD_BITS) throw invalidParameter('capacity', `small enough to size layer ${index} at error rate ${errorRate}`, capacity)
    parameters = { ...parameters, bits: grown * parameters.shards }
  }
  return parameters
}

/** The expected false-positive rate of a filter with `parameters` holding `items` keys (see {@link LayerInfo.expectedErrorRate}). */
export function modelRate(parameters: FilterParameters, items: number): number {
  return estimateErrorRate({ bits: parameters.bits, hashes: parameters.hashes, items, shards: parameters.shards, layout: parameters.layout })
}

/** A classic filter of 64 hashes meeting `errorRate`: the fill f = p^(1/64) fixes bits per key. */
function sizeAtMostHashes(capacity: number, errorRate: number, seed: number, shardsOption: number | undefined): FilterParameters {
  const hashes = MAX_HASHES
  const fill = Math.pow(errorRate, 1 / hashes)
  let bits = Math.ceil((-hashes * capacity) / Math.log1p(-fill))
  for (;;) {
    const shards = shardsOption ?? Math.ceil(bits / MAX_SHARD_BITS)
    const shardBits = Math.ceil(bits / shards / 8) * 8
    if (shards > MAX_SHARDS || shardBits > MAX_SHARD_BITS) {
      throw invalidParameter('capacity', `small enough to size a layer at error rate ${errorRate}`, capacity)
    }
    const parameters = checkParameters({ bits: shardBits * shards, hashes, shards, seed, layout: 'classic' })
    if (modelRate(parameters, capacity) <= errorRate) return parameters
    bits = Math.ceil(bits * 1.001)
  }
}

/**
 * The window that time `nowMs` falls in: ⌊nowMs / (seconds × 1000)⌋. A rotating filter's layers
 * of windows at or below `current − keep` are dropped.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` unless `nowMs` is a number from 0 to 2^53 − 1.
 */
export function windowOf(policy: LayerPolicy, nowMs: number): number {
  if (typeof nowMs !== 'number' || !(nowMs >= 0 && nowMs <= Number.MAX_SAFE_INTEGER)) {
    throw invalidParameter('clock()', 'milliseconds since the Unix epoch, a number from 0 to 2^53 − 1', nowMs)
  }
  return Math.floor(nowMs / (policy.seconds * 1000))
}

/**
 * The latest window a rotating filter may hold: the last to start by 2^53 − 1 ms (the latest time
 * {@link windowOf} takes), so that a window's arithmetic (its start in ms, w ± keep, Redis's
 * decimal text of it) stays exact in a double (docs/SPEC.md, section 8).
 */
export function maxWindow(policy: LayerPolicy): number {
  return Math.floor(Number.MAX_SAFE_INTEGER / (policy.seconds * 1000))
}

/** What `layers` reports for each layer, oldest first. */
export interface LayerInfo {
  /** Keys this layer takes before the next is added (per window for a rotating filter). */
  readonly capacity: number
  /** Keys added to this layer that were new. */
  readonly count: number
  /** The false-positive rate the layer is sized for at `capacity`. */
  readonly errorRate: number
  /**
   * The layer's expected false-positive rate at `capacity` keys for its actual parameters
   * (`estimateErrorRate`): at most `errorRate` for a layer this release sized; a layer an earlier
   * release sized keeps its size, and its rate may sit a little above.
   */
  readonly expectedErrorRate: number
  /** The layer's parameters; `parameters.bits` is its size. */
  readonly parameters: FilterParameters
  /** The time window the layer belongs to (rotating filters), 0 for a scalable filter. */
  readonly window: number
}

/** The compound false-positive rate of layers with these individual rates: 1 − Π(1 − rate_i). */
export function compoundErrorRate(rates: Iterable<number>): number {
  let none = 1
  for (const rate of rates) none *= 1 - rate
  return 1 - none
}

/** `BLOOM_INCOMPATIBLE` for merging layered filters: what each layer would hold is not defined. */
export function layeredMergeRefused(): BloomError {
  return new BloomError(
    'BLOOM_INCOMPATIBLE',
    'merge: layered filters cannot be merged: which layer (and window) each key belongs to, and so when a layer is full or dropped, ' +
      'is not defined for a union. Add the other filter’s keys instead, or export both and keep them side by side.',
  )
}
