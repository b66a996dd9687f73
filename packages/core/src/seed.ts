import { sameParameters, type FilterParameters } from './parameters.js'
import { sizeFilter, type SizingOptions } from './sizing.js'

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

/**
 * The parameters of a new filter: {@link sizeFilter}'s, with a {@link randomSeed} when `options`
 * give no `seed`. `seeded` says whether the caller chose the seed; a backend's `create` passes it
 * to {@link adoptsStored} when a filter already exists under the same name or folder.
 */
export function newFilterParameters(options: SizingOptions): { readonly parameters: FilterParameters; readonly seeded: boolean } {
  const sized = sizeFilter(options)
  const seeded = options?.seed !== undefined
  return { parameters: seeded ? sized : { ...sized, seed: randomSeed() }, seeded }
}

/**
 * Whether `create` may open the filter already stored with `stored` parameters instead of the new
 * one it asked for: the same parameters, or, when the caller gave no seed, the same parameters but
 * the seed, which the stored filter then keeps. So racing creators without a seed end with one
 * filter and one seed; a caller who named a seed gets only a filter with that seed.
 */
export function adoptsStored(wanted: FilterParameters, stored: FilterParameters, seeded: boolean): boolean {
  // A classic filter of an earlier release (scheme 1) is adopted as it is: it keeps its scheme and
  // answers as before, rather than refusing a create that names it with the same sizes.
  const scheme = stored.layout === wanted.layout ? wanted.scheme : stored.scheme
  return sameParameters(wanted, { ...stored, seed: seeded ? stored.seed : wanted.seed, scheme })
}
