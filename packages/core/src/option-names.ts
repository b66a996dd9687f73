import { BloomError, checkInteger, describe, invalidParameter } from './errors.js'
import { checkBoolean, checkClockOption, checkErrorRate, checkKind, checkTightening, MAX_GROWTH } from './option-values.js'
import type { RotatingOptions, ScalableOptions, SizingOptions, WindowOptions } from './options.js'
import { checkLayout, checkScheme, MAX_HASHES, MAX_SHARD_BITS, MAX_SHARDS, type FilterParametersInput } from './parameters.js'

// A typo in an option name (`capcity`, `countng`) would silently leave a default in place:
// JavaScript callers, and TypeScript callers passing a config object held in a variable, get no
// excess-property check. So every public create/open/import refuses a name it does not know.
// Each group is written as a Record over the type's keys: adding an option to the type without
// adding it here fails to compile, so a valid option is never refused.

/** The groups of option names core defines; a backend adds its own names beside them. */
export type OptionGroup = 'sizing' | 'parameters' | 'layered' | 'counting' | 'kind' | 'clock'

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
  // A rotating filter's clock alone, for imports (which take no other layered option).
  clock: ['clock'],
}

/**
 * The value check of each option name of core's groups, applied by {@link checkOptionNames} to
 * every value given. Contextual limits (a capacity too large for its error rate, bits that do not
 * divide into shards) are checked where the option is used; these are the limits every use shares.
 */
const OPTION_VALUES: { readonly [name: string]: (value: unknown) => unknown } = {
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
  window: (value) => checkWindow(value),
  clock: checkClockOption,
  counting: (value) => checkBoolean('counting', value),
  kind: checkKind,
}

/** The names of {@link WindowOptions} (a Record, so that a new one must be listed). */
const WINDOW_OPTIONS = Object.keys({ seconds: true, keep: true } satisfies Record<keyof WindowOptions, true>)

/**
 * A rotating filter's `window`: an object of its own `seconds` (1 to 2^32 − 1) and `keep` (1 to
 * 65 536), and nothing else.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the field and its range.
 */
export function checkWindow(window: unknown): WindowOptions {
  if (window === null || typeof window !== 'object') throw invalidParameter('window', 'an object { seconds, keep }', window)
  checkOptionNames('window', window, [], WINDOW_OPTIONS)
  const { seconds, keep } = window as WindowOptions
  return { seconds: checkInteger('window.seconds', seconds, 1, 0xffffffff), keep: checkInteger('window.keep', keep, 1, 65_536) }
}

/**
 * Checks the options object of a public call, the one place every create/open/import (and the
 * sizing functions) pass their options through:
 * - `options` must be an object (not null, a primitive or a function);
 * - every name must be one the call takes (core's `groups` plus the backend's `own`), refused with
 *   the nearest allowed one when it looks like a typo, and every allowed name;
 * - every option must be the object's own property: one inherited from a prototype is refused,
 *   not read (`Object.create(defaults)` or a polluted `Object.prototype` would otherwise set it
 *   unseen);
 * - every value given to a name of core's groups must pass its check in {@link OPTION_VALUES}
 *   (`undefined` is "left out"; `null` is a value and is refused like any other of the wrong type).
 *   The backend's own names are checked by the backend's own option checks.
 * @param fail makes the error for the object and its names (a package with its own codes passes one).
 * @throws BloomError `BLOOM_INVALID_PARAMETER` by default, naming the option and its allowed range.
 */
export function checkOptionNames(
  call: string,
  options: unknown,
  groups: readonly OptionGroup[],
  own: readonly string[] = [],
  fail: (message: string) => Error = (message) => new BloomError('BLOOM_INVALID_PARAMETER', message),
): void {
  if (options === null || typeof options !== 'object') throw fail(`${call}: options must be an object; got ${describe(options)}`)
  const core = [...new Set(groups.flatMap((group) => GROUPS[group]))]
  const names = [...new Set([...core, ...own])]
  const unknown = Object.keys(options).filter((name) => !names.includes(name))
  if (unknown.length > 0) {
    const named = unknown.map((name) => {
      const near = nearest(name, names)
      return `"${name}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`
    })
    throw fail(`${call}: unknown option${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; it takes ${names.join(', ')}`)
  }
  const inherited = inheritedNames(options, names)
  if (inherited.length > 0) throw fail(`${call}: options must be own properties, not inherited: ${inherited.join(', ')}`)
  for (const name of core) {
    const value = (options as Record<string, unknown>)[name]
    if (value !== undefined) OPTION_VALUES[name](value)
  }
}

/** The names `options` holds through its prototype chain only: allowed ones (enumerable or not) and any enumerable one. */
function inheritedNames(options: object, allowed: readonly string[]): string[] {
  const found = new Set(allowed.filter((name) => name in options && !Object.hasOwn(options, name)))
  for (const name in options) if (!Object.hasOwn(options, name)) found.add(name)
  return [...found]
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
