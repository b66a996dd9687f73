import { BloomError, checkInteger, invalidParameter } from './errors.js'
import type { LayeredOptions } from './options.js'
import { checkLayout, checkScheme, MAX_HASHES, MAX_SHARD_BITS, MAX_SHARDS } from './parameters.js'

// The one home of what each option core defines may hold. An option left out is `undefined`, and
// only `undefined`: `null`, `false`, 0 or '' is a value like any other and must pass its check (a
// `null` seed once meant seed 0, a public seed; a `counting: 1` once made a plain filter).

/** The most a layer may grow over the one before it. */
export const MAX_GROWTH = 65_536

/** Validates `errorRate` ∈ (0, 1). */
export function checkErrorRate(name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value < 1)) {
    throw invalidParameter(name, 'a number greater than 0 and less than 1', value)
  }
  return value
}

/** Asserts a boolean (`true` or `false`: not 1, 'yes' or null). */
export function checkBoolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidParameter(name, 'true or false', value)
  return value
}

/** Asserts a layered filter's tightening ratio r ∈ (0, 1). */
export function checkTightening(value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value < 1)) {
    throw invalidParameter('tightening', 'a number greater than 0 and less than 1', value)
  }
  return value
}

/** Asserts a clock: a function returning milliseconds since the Unix epoch. */
export function checkClockOption(value: unknown): () => number {
  if (typeof value !== 'function') throw invalidParameter('clock', 'a function returning milliseconds since the Unix epoch', value)
  return value as () => number
}

/** The kinds of filter an `open` or `import` may insist on. */
export type FilterKindOption = 'fixed' | 'layered' | 'counting'

/** Asserts a filter kind to insist on: `'fixed'`, `'layered'` or `'counting'`. */
export function checkKind(value: unknown): FilterKindOption {
  if (value !== 'fixed' && value !== 'layered' && value !== 'counting') throw invalidParameter('kind', "'fixed', 'layered' or 'counting' (or left out for any)", value)
  return value
}

/**
 * Whether a backend's `create` options ask for a layered filter rather than a fixed one: any of
 * the layered options given (`tightening` or `clock` without `growth` or `window` too, so that
 * they are refused by the layered checks rather than ignored by a fixed filter).
 */
export function isLayeredOptions(options: unknown): options is LayeredOptions {
  if (options === null || typeof options !== 'object') return false
  const { growth, window, tightening, clock } = options as { growth?: unknown; window?: unknown; tightening?: unknown; clock?: unknown }
  return growth !== undefined || window !== undefined || tightening !== undefined || clock !== undefined
}

/**
 * Refuses what a counting filter's `create` cannot honour: `counting: false` (a plain filter is the
 * fixed filter's `create`) and `growth` or `window` (a layered filter).
 * @throws BloomError `BLOOM_INVALID_PARAMETER`.
 */
export function checkCountingCreate(options: object): void {
  const { counting } = options as { counting?: unknown }
  if (counting === false) throw invalidParameter('counting', "true or left out for a counting filter's create (a plain filter is the fixed filter's create)", counting)
  if (isLayeredOptions(options)) {
    throw new BloomError(
      'BLOOM_INVALID_PARAMETER',
      'counting: a counting filter cannot also grow or rotate (growth, window, tightening, clock): removing a key would have to find the layer that counted it, and a key added again lands in another',
    )
  }
}

/**
 * The value check of each option name core defines (the groups of `checkOptionNames`). Contextual
 * limits (a capacity too large for its error rate, bits that do not divide into shards) are checked
 * where the option is used; these are the limits every use shares.
 */
export const OPTION_VALUES: { readonly [name: string]: (value: unknown) => unknown } = {
  capacity: (value) => checkInteger('capacity', value, 1, Number.MAX_SAFE_INTEGER),
  errorRate: (value) => checkErrorRate('errorRate', value),
  shards: (value) => checkInteger('shards', value, 1, MAX_SHARDS),
  seed: (value) => checkInteger('seed', value, 0, 0xffffffff),
  layout: checkLayout,
  bits: (value) => checkInteger('bits', value, 8, MAX_SHARDS * MAX_SHARD_BITS),
  hashes: (value) => checkInteger('hashes', value, 1, MAX_HASHES),
  scheme: checkScheme,
  growth: (value) => checkInteger('growth', value, 1, MAX_GROWTH),
  tightening: checkTightening,
  // The window's own fields are checked where the policy is read (layerPolicyOf), names included.
  window: (value) => {
    if (value === null || typeof value !== 'object') throw invalidParameter('window', 'an object { seconds, keep }', value)
  },
  clock: checkClockOption,
  counting: (value) => checkBoolean('counting', value),
  kind: checkKind,
}
