import type { GuardKey } from './options.js'
import { isWellFormed } from './well-formed.js'

/**
 * How the guard stores things in the cache. Every entry starts with a one-letter tag, so an
 * "absent" marker or a fence can never be mistaken for a value, whatever `serialize` returns:
 * - `V<serialized>` a found value;
 * - `N` the key does not exist (cached for `nullTtl`);
 * - `f<token>` a write fence left by `created`/`invalidate`: read as a miss, and a load that began
 *   before it cannot overwrite it (its compare-and-set expects what it saw before the fence).
 * Anything else reads as a miss. That includes 0.1's entries (`v<serialized>`, `n`), written when
 * two guards or two ids could share a key: they are never trusted, only loaded again and replaced.
 */
export const VALUE_TAG = 'V'
export const ABSENT = 'N'
export const FENCE_TAG = 'f'

/**
 * The key prefix of a guard: its name with `%`, `:`, `#`, `!` and `~` percent-escaped, so a key's
 * name ends at its first `:`, `#`, `!` or `~`, and two guards never write the same key whatever
 * their names and ids. A name without those characters is its own prefix (0.1's keys).
 */
export function keyPrefixOf(name: string): string {
  return name.replace(/[%:#!~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/**
 * Cache key of `id` under a guard's `prefix`, one key per id as the loader sees it:
 * - a well-formed string: `<prefix>:<id>`;
 * - a string with a lone surrogate: `<prefix>~<JSON literal>` (`"x\ud801"`). Redis clients encode
 *   keys as UTF-8, where a lone surrogate becomes U+FFFD, so the raw id would share the entry of
 *   `x\uFFFD`; JSON writes it as an escape instead, and `~` keeps it apart from `:` keys;
 * - bytes: `<prefix>#<hex>`.
 */
export function cacheKeyOf(prefix: string, id: GuardKey): string {
  if (typeof id !== 'string') return `${prefix}#${hex(id)}`
  return isWellFormed(id) ? `${prefix}:${id}` : `${prefix}~${JSON.stringify(id)}`
}

/**
 * Whether `view`'s buffer was detached (transferred to a worker, or by structuredClone): it reads
 * as empty, and would be taken for the empty key. Core's key check does the same for filters; the
 * guard keeps its own copy (no runtime dependency on @bloomkit/core). Only an empty view is looked at.
 */
export function isDetached(view: Uint8Array): boolean {
  if (view.byteLength !== 0) return false
  const buffer = view.buffer as ArrayBuffer & { readonly detached?: boolean }
  if (typeof buffer.detached === 'boolean') return buffer.detached
  if (buffer.byteLength !== 0) return false
  try {
    new Uint8Array(buffer)
    return false
  } catch {
    return true
  }
}

/** Lock key of a cache key: `<prefix>!` then the rest of the cache key (`!` never ends an escaped name). */
export function lockKeyOf(prefix: string, cacheKey: string): string {
  return `${prefix}!${cacheKey.slice(prefix.length)}`
}

function hex(bytes: Uint8Array): string {
  let out = ''
  for (let i = 0; i < bytes.length; i++) out += bytes[i].toString(16).padStart(2, '0')
  return out
}

/** A cache entry as the read path sees it: a value, "absent", or a miss (with what was there, for compare-and-set). */
export type CacheRead<V> = { kind: 'value'; value: V } | { kind: 'absent' } | { kind: 'miss'; seen: string | null }
