import type { GuardKey } from './options.js'

/**
 * How the guard stores things in the cache. Every entry starts with a one-letter tag, so an
 * "absent" marker or a fence can never be mistaken for a value, whatever `serialize` returns:
 * - `v<serialized>` a found value;
 * - `n` the key does not exist (cached for `nullTtl`);
 * - `f<token>` a write fence left by `created`/`invalidate`: read as a miss, and a load that began
 *   before it cannot overwrite it (its compare-and-set expects what it saw before the fence).
 */
export const VALUE_TAG = 'v'
export const ABSENT = 'n'
export const FENCE_TAG = 'f'

/** Cache key of `id`: `<name>:<id>` for a string, `<name>#<hex>` for bytes (never the same). */
export function cacheKeyOf(name: string, id: GuardKey): string {
  return typeof id === 'string' ? `${name}:${id}` : `${name}#${hex(id)}`
}

/** Lock key of a cache key: the `!` cannot follow a guard's name in any cache key. */
export function lockKeyOf(name: string, cacheKey: string): string {
  return `${name}!${cacheKey.slice(name.length)}`
}

function hex(bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; i++) out += bytes[i].toString(16).padStart(2, '0')
  return out
}

/** A cache entry as the read path sees it: a value, "absent", or a miss (with what was there, for compare-and-set). */
export type CacheRead<V> = { kind: 'value'; value: V } | { kind: 'absent' } | { kind: 'miss'; seen: string | null }
