import { BloomError } from './errors.js'
import type { RotatingOptions, ScalableOptions } from './layer-policy.js'
import type { FilterParametersInput } from './parameters.js'
import type { SizingOptions } from './sizing.js'

// A typo in an option name (`capcity`, `countng`) would silently leave a default in place:
// JavaScript callers, and TypeScript callers passing a config object held in a variable, get no
// excess-property check. So every public create/open/import refuses a name it does not know.
// Each group is written as a Record over the type's keys: adding an option to the type without
// adding it here fails to compile, so a valid option is never refused.

/** The groups of option names core defines; a backend adds its own names beside them. */
export type OptionGroup = 'sizing' | 'parameters' | 'layered' | 'counting' | 'kind'

const present = true as const
const GROUPS: { readonly [group in OptionGroup]: readonly string[] } = {
  sizing: Object.keys({ capacity: present, errorRate: present, shards: present, seed: present, layout: present } satisfies Record<keyof SizingOptions, true>),
  parameters: Object.keys(
    { bits: present, hashes: present, shards: present, seed: present, layout: present, scheme: present } satisfies Record<keyof FilterParametersInput, true>,
  ),
  layered: Object.keys(
    { growth: present, tightening: present, window: present, clock: present } satisfies Record<Exclude<keyof ScalableOptions | keyof RotatingOptions, keyof SizingOptions>, true>,
  ),
  counting: ['counting'],
  kind: ['kind'],
}

/**
 * Refuses an own enumerable property of `options` that is none of the allowed names (core's
 * `groups` plus the backend's `own`), with a message naming the call, each unknown name, the
 * nearest allowed one when it looks like a typo, and every allowed name. A non-object is left to
 * the caller's own check.
 * @param fail makes the error (a package with its own codes passes one).
 * @throws BloomError `BLOOM_INVALID_PARAMETER` by default.
 */
export function checkOptionNames(
  call: string,
  options: unknown,
  groups: readonly OptionGroup[],
  own: readonly string[] = [],
  fail: (message: string) => Error = (message) => new BloomError('BLOOM_INVALID_PARAMETER', message),
): void {
  if (options === null || typeof options !== 'object') return
  const names = [...new Set([...groups.flatMap((group) => GROUPS[group]), ...own])]
  const unknown = Object.keys(options).filter((name) => !names.includes(name))
  if (unknown.length === 0) return
  const named = unknown.map((name) => {
    const near = nearest(name, names)
    return `"${name}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`
  })
  throw fail(`${call}: unknown option${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; it takes ${names.join(', ')}`)
}

/** The allowed name within edit distance 2 of `name` (case ignored), if one is. */
function nearest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of names) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/** Levenshtein distance (names are short: a row at a time is plenty). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]
}
