/**
 * `@bloomkit/memory-backend/reader`: answers `has` from a snapshot's bytes, for a page or an edge
 * function that only checks keys against a filter built elsewhere. Under 2 KB gzip in a bundle
 * (`openSnapshot`), where the full filter, which also creates, sizes, adds and exports, is ~12 KB;
 * no WebAssembly, so it runs under a Content-Security-Policy without 'wasm-unsafe-eval'.
 */
import { BloomError, type BloomKey } from '@bloomkit/core'
import { hashKey } from './reader/hash.js'
import { MAGIC, readFixed, type Probe } from './reader/fixed.js'
import { readLayered } from './reader/layered.js'

export type { BloomKey } from '@bloomkit/core'
/** The coded errors the reader throws, to tell them apart without importing the full filter's entry. */
export { BloomError, isBloomError } from '@bloomkit/core'

/** What {@link openSnapshot} returns: the checks of a filter, and nothing else. */
export interface SnapshotFilter {
  /** Whether the key may have been added: false means definitely not. @throws BloomError `BLOOM_INVALID_KEY`. */
  has(key: BloomKey): boolean
  /** {@link has} for each key, in order. @throws BloomError `BLOOM_INVALID_PARAMETER` unless `keys` is an iterable of keys. */
  hasMany(keys: Iterable<BloomKey>): boolean[]
}

/** Options of {@link openLayeredSnapshot}. */
export interface OpenSnapshotOptions {
  /** Milliseconds since the Unix epoch, read at each check of a rotating layered filter. Default: `Date.now`. */
  readonly clock?: () => number
}

/**
 * Reads a fixed filter's snapshot from `export()` of any backend (format version 1: every hash
 * scheme and layout; a counting filter's `exportPlain()`). The bytes are checked whole (magic,
 * version, CRC-32s, length, parameters) before any answer, as the full filter's import checks them,
 * and are not copied: do not change them afterwards. Its answers are the full filter's for every key.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` (not a Uint8Array), `BLOOM_CORRUPT_SNAPSHOT` or
 *   `BLOOM_UNSUPPORTED_VERSION` (a layered filter's snapshot: {@link openLayeredSnapshot} reads it;
 *   a counting filter's own: ship its `exportPlain()`).
 */
export function openSnapshot(snapshot: Uint8Array): SnapshotFilter {
  return filterOf(readFixed(checkBytes(snapshot)))
}

/**
 * Reads a layered filter's snapshot (format version 2), or a fixed filter's as {@link openSnapshot}
 * does: for a page that may be sent either. A rotating filter's layers whose windows have passed by
 * `clock` are left out at each check, as `LayeredMemoryFilter` drops them. An entry point of its own
 * because it is larger: a page that only reads fixed filters carries none of it.
 * @throws BloomError as {@link openSnapshot}.
 */
export function openLayeredSnapshot(snapshot: Uint8Array, options?: OpenSnapshotOptions): SnapshotFilter {
  const layered = checkBytes(snapshot).length >= 6 && new DataView(snapshot.buffer, snapshot.byteOffset).getUint32(0, true) === MAGIC && snapshot[4] === 2 && snapshot[5] === 0
  return filterOf(layered ? readLayered(snapshot, options?.clock ?? Date.now) : readFixed(snapshot))
}

function checkBytes(snapshot: Uint8Array): Uint8Array {
  if (!(snapshot instanceof Uint8Array)) throw new BloomError('BLOOM_INVALID_PARAMETER', 'snapshot must be a Uint8Array')
  return snapshot
}

/** has and hasMany over a checked snapshot's probe; each call hashes into the same two-word array. */
function filterOf({ seed, probe }: { seed: number; probe: Probe }): SnapshotFilter {
  const pair = new Int32Array(2)
  const has = (key: BloomKey) => {
    hashKey(key, seed, pair)
    return probe(pair[0], pair[1])
  }
  return {
    has,
    hasMany(keys) {
      if (typeof keys === 'string' || ArrayBuffer.isView(keys) || typeof (keys as Partial<Iterable<BloomKey>> | null)?.[Symbol.iterator] !== 'function') {
        throw new BloomError('BLOOM_INVALID_PARAMETER', 'keys must be an iterable of keys')
      }
      return Array.from(keys, (key) => has(key))
    },
  }
}
