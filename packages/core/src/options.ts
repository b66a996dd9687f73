import type { BitLayout } from './parameters.js'

// The options of core's filters, types only: the checks of names (option-names.ts) and values
// (option-values.ts), sizing and the layered policy all read them, and none of those modules has
// to import another for its types.

/** Options that size a new filter. */
export interface SizingOptions {
  /** The number of distinct keys the filter is sized for; a positive safe integer. */
  readonly capacity: number
  /** The target false-positive probability at `capacity` keys, in (0, 1). */
  readonly errorRate: number
  /**
   * How many shards to split the bits into, from 1 to 65 536. Default: as few as keep each shard
   * at most 2^32 bits. More shards are sized up so that the error rate stays on target.
   */
  readonly shards?: number
  /**
   * Seed of the key hash, an unsigned 32-bit integer. `sizeFilter` reports the seed it is given
   * (0 when none). A backend's `create` without a seed picks a random secret one
   * (`crypto.getRandomValues`), so an attacker cannot aim keys at a chosen absent key's bits; pass
   * a fixed seed (e.g. 0) when two services must build the same filter independently, or for test
   * vectors.
   */
  readonly seed?: number
  /**
   * Where a key's bits go; see {@link BitLayout}. Default: `'blocked'` when it needs at most
   * `BLOCKED_MAX_OVERHEAD` (sizing.ts) more bits than classic for the same error rate (error rates down
   * to about 0.1 %), otherwise `'classic'`.
   */
  readonly layout?: BitLayout
}

/**
 * A filter that grows past its capacity: when the newest layer has taken `capacity × growth^i`
 * new keys, a layer `growth`× larger and with a tighter error rate is added, so that the whole
 * filter's false-positive rate stays at or below `errorRate` however many layers it grows.
 */
export interface ScalableOptions extends SizingOptions {
  /** How much larger each layer is than the one before: an integer from 1 to 65 536 (2 is usual). */
  readonly growth: number
  /**
   * r in (0, 1): layer i is sized for `errorRate·(1 − r)·r^i`, so the layers' rates sum to less
   * than `errorRate`. Larger r spends fewer bits on later layers. Default: 0.5.
   */
  readonly tightening?: number
}

/** Time windows of a rotating filter. */
export interface WindowOptions {
  /** The length of one window in seconds: an integer from 1 to 2^32 − 1. */
  readonly seconds: number
  /** How many windows `has` checks, the current one included: an integer from 1 to 65 536. */
  readonly keep: number
}

/**
 * A filter that forgets: keys go into the layer of the current time window and `has` checks the
 * last `keep` windows. A key added at time t is found until at least t + (keep − 1)·seconds and
 * is forgotten after t + keep·seconds at most.
 */
export interface RotatingOptions extends SizingOptions {
  /** The windows: keys added per window are `capacity`, at `errorRate / keep` each. */
  readonly window: WindowOptions
  /** Optional: a window that takes more than `capacity` keys grows layers as a scalable filter does. */
  readonly growth?: number
  /** As {@link ScalableOptions.tightening}, within one window. */
  readonly tightening?: number
  /** Milliseconds since the Unix epoch, for tests. Default: `Date.now`. */
  readonly clock?: () => number
}

/** Options that make a layered filter: a scalable (`growth`) or a rotating (`window`) one. */
export type LayeredOptions = ScalableOptions | RotatingOptions
