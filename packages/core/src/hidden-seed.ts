/**
 * Node's `util.inspect.custom` (`console.log` uses it too), by its registered name: core needs no
 * `node:util`, so it stays importable in browsers and edge runtimes.
 */
export const INSPECT = Symbol.for('nodejs.util.inspect.custom')

/** The `inspect` function Node hands to an `[INSPECT]` method. */
export type Inspect = (value: unknown, options: object) => string

/**
 * What `util.inspect` and `console.log` show of a filter, fixed, counting or layered: its class and
 * `shown` (its parameters, or a layered filter's policy) with `seed: '<hidden>'`, then `extra`.
 * Nothing else of the filter is shown (its hasher holds the seed too). The seed is the key of the
 * keyed hashing: whoever reads it can craft keys that read present, and logs are read by more
 * people than the filter.
 */
export function inspectHidingSeed(filter: object, shown: { readonly seed: number }, extra: object, options: object, inspect: Inspect): string {
  const { seed: _seed, ...rest } = shown
  return `${filter.constructor.name} ${inspect({ ...rest, seed: '<hidden>', ...extra }, options)}`
}
