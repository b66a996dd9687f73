import { BloomError, invalidParameter } from './errors.js'
import type { LayeredOptions } from './options.js'

// The checks of option values that more than one module applies (option-names.ts holds the table
// of every option's check). An option left out is `undefined`, and only `undefined`: `null`,
// `false`, 0 or '' is a value like any other and must pass its check (a `null` seed once meant seed
// 0, a public seed; a `counting: 1` once made a plain filter).

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
  checkCreateKind(options, 'counting')
  if (counting === false) throw invalidParameter('counting', "true or left out for a counting filter's create (a plain filter is the fixed filter's create)", counting)
  if (isLayeredOptions(options)) {
    throw new BloomError(
      'BLOOM_INVALID_PARAMETER',
      'counting: a counting filter cannot also grow or rotate (growth, window, tightening, clock): removing a key would have to find the layer that counted it, and a key added again lands in another',
    )
  }
}

/**
 * Refuses a `kind` given to a create that makes another kind (`kind` is for open and import, where
 * it insists on one; a create makes the kind its options ask for: `made`, which the caller decides
 * from `counting`, `growth` and `window`). Without it, `create(…, { kind: 'layered' })` made a
 * fixed filter in silence.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `kind`.
 */
export function checkCreateKind(options: object, made: FilterKindOption): void {
  const { kind } = options as { kind?: unknown }
  if (kind !== undefined && kind !== made) {
    throw invalidParameter('kind', `'${made}' or left out: these options make a ${made} filter (counting: true makes a counting one; growth or window a layered one)`, kind)
  }
}
