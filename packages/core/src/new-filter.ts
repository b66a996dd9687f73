import { sameParameters, type FilterParameters } from './parameters.js'
import type { SizingOptions } from './options.js'
import { sizeFilter } from './sizing.js'

/**
 * A secret 32-bit seed from the platform's cryptographic generator (`crypto.getRandomValues`:
 * browsers, workers, Deno, Bun and Node ≥ 20), never 0 so that it cannot be mistaken for the
 * reproducible default of earlier releases.
 *
 * Why: with a known seed, an attacker who can insert keys (sign-ups, URLs) can search for keys
 * that set the bits of a chosen absent key, so that it reads present (a targeted false positive)
 * while the overall false-positive rate does not move. With a secret seed the same search is blind.
 */
export function randomSeed(): number {
  const word = new Uint32Array(1)
  do globalThis.crypto.getRandomValues(word)
  while (word[0] === 0)
  return word[0]
}

/** What {@link newFilterParameters} gives a backend's `create`. */
export interface NewFilter {
  /** The new filter's parameters. */
  readonly parameters: FilterParameters
  /** Whether the caller chose the seed. */
  readonly seeded: boolean
  /**
   * Parameters an earlier release's sizing gave the same options, when they differ from
   * `parameters` (seed as in `parameters`): a stored filter of these is adopted too (see
   * {@link adoptsStored}). Empty unless `sizeEarlier` was given (a memory filter has nothing stored).
   */
  readonly earlier: readonly FilterParameters[]
}

/**
 * The parameters of a new filter: {@link sizeFilter}'s, with a {@link randomSeed} when `options`
 * give no `seed`. `seeded` says whether the caller chose the seed; a persistent backend's `create`
 * passes `sizeEarlier` (`earlierSizeFilter`, or its own sizing over it), then `seeded` and `earlier` to {@link adoptsStored} when a filter already exists under the same name or folder.
 */
export function newFilterParameters(options: SizingOptions, size: (options: SizingOptions) => FilterParameters = sizeFilter, sizeEarlier?: (options: SizingOptions) => FilterParameters): NewFilter {
  const sizing = sizingOf(options)
  const sized = size(sizing)
  // Only `undefined` leaves the seed to chance: a null or otherwise bad seed was refused by `size`.
  const seeded = sizing.seed !== undefined
  const parameters = seeded ? sized : { ...sized, seed: randomSeed() }
  return { parameters, seeded, earlier: sizeEarlier === undefined ? [] : earlierSizes(parameters, sizeEarlier(sizing)) }
}

/**
 * The sizing options among a backend's create options (which also hold its own, such as a TTL or
 * a cache size), so that `sizeFilter` sees only the names it takes. Own properties only (the
 * caller's checkOptionNames refused inherited ones); a non-object is passed on for `size` to refuse.
 */
function sizingOf(options: SizingOptions): SizingOptions {
  if (options === null || typeof options !== 'object') return options
  const { capacity, errorRate, shards, seed, layout } = options
  // Written as a Record over the type's keys: a sizing option added to the type must be listed here.
  return { capacity, errorRate, shards, seed, layout } satisfies Record<keyof SizingOptions, unknown>
}

/** `[previous]` with `parameters`' seed, or none when it is the same as `parameters`. */
export function earlierSizes(parameters: FilterParameters, previous: FilterParameters): readonly FilterParameters[] {
  const earlier = { ...previous, seed: parameters.seed }
  return sameParameters(earlier, parameters) ? [] : [earlier]
}

/** What a `create` asked for, as {@link adoptsStored} compares it: a {@link NewFilter} fits. */
export interface WantedFilter {
  /** The new filter's parameters. */
  readonly parameters: FilterParameters
  /** Whether the caller chose the seed. */
  readonly seeded: boolean
  /** Sizes an earlier release gave the same options (see {@link NewFilter.earlier}). Default: none. */
  readonly earlier?: readonly FilterParameters[]
}

/**
 * Whether `create` may open the filter already stored with `stored` parameters instead of the new
 * one it asked for (`wanted.parameters`): the same parameters, or, when the caller gave no seed, the
 * same parameters but the seed, which the stored filter then keeps. So racing creators without a
 * seed end with one filter and one seed; a caller who named a seed gets only a filter with that
 * seed. A filter of the sizes an earlier release gave the same options (`wanted.earlier`) is adopted
 * alike, with its own size.
 */
export function adoptsStored(wanted: WantedFilter, stored: FilterParameters): boolean {
  const { seeded, earlier = [] } = wanted
  return [wanted.parameters, ...earlier].some((candidate) => {
    // A classic filter of an earlier release (scheme 1) is adopted as it is: it keeps its scheme and
    // answers as before, rather than refusing a create that names it with the same sizes.
    const scheme = stored.layout === candidate.layout ? candidate.scheme : stored.scheme
    return sameParameters(candidate, { ...stored, seed: seeded ? stored.seed : candidate.seed, scheme })
  })
}
