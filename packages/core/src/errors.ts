/**
 * Stable error codes. Each is documented under "Errors" in the core README;
 * a code, once published, never changes meaning.
 */
export type BloomErrorCode =
  /** An argument is out of range or of the wrong type; the message names it and the allowed range. */
  | 'BLOOM_INVALID_PARAMETER'
  /** A key is neither a string nor a Uint8Array. */
  | 'BLOOM_INVALID_KEY'
  /** Two filters (or a filter and stored parameters) do not have identical parameters. */
  | 'BLOOM_INCOMPATIBLE'
  /** A snapshot is truncated, has a bad checksum or impossible fields. */
  | 'BLOOM_CORRUPT_SNAPSHOT'
  /** A snapshot or stored filter uses a format version or hash scheme this release cannot read. */
  | 'BLOOM_UNSUPPORTED_VERSION'
  /** The filter or store was closed. */
  | 'BLOOM_CLOSED'
  /** The backing store failed or could not be reached; `cause` holds the store's error. */
  | 'BLOOM_STORE_UNAVAILABLE'
  /** Stored bits are gone (evicted, expired, deleted): answering would give false negatives. */
  | 'BLOOM_DATA_LOST'
  /** Stored bits or metadata fail their checksum or are not a bloomkit filter. */
  | 'BLOOM_CORRUPT_STORE'
  /** No filter exists under that name or path. */
  | 'BLOOM_NOT_FOUND'
  /** The store is held by another process. */
  | 'BLOOM_LOCKED'
  /** A writer's clock is so far behind a shared rotating filter's newest window that what it adds would be invisible. */
  | 'BLOOM_CLOCK_SKEW'

/** The one error class bloomkit throws for anything but plain programming mistakes. */
export class BloomError extends Error {
  /** A stable, documented code; match on this rather than on the message. */
  readonly code: BloomErrorCode

  constructor(code: BloomErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'BloomError'
    this.code = code
  }
}

/**
 * Whether `value` is a {@link BloomError} (with `code`, if given). Unlike `instanceof`, it also
 * recognises one thrown by a second copy of `@bloomkit/core` (two versions installed side by side).
 */
export function isBloomError(value: unknown, code?: BloomErrorCode): value is BloomError {
  const bloom = value instanceof BloomError || (value instanceof Error && value.name === 'BloomError' && typeof (value as { code?: unknown }).code === 'string')
  return bloom && (code === undefined || (value as BloomError).code === code)
}

/** Throws `BLOOM_INVALID_PARAMETER` naming the parameter, the allowed range and what was given. */
export function invalidParameter(name: string, allowed: string, got: unknown): BloomError {
  return new BloomError('BLOOM_INVALID_PARAMETER', `${name} must be ${allowed}; got ${describe(got)}`)
}

/** A value as a message shows it: a string quoted (cut at 40 characters), an object by its tag. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'bigint') return `${value}n`
  if (value === null || typeof value !== 'object') return String(value)
  return Object.prototype.toString.call(value)
}

/** Asserts an integer in [min, max] (both inclusive, both safe integers). */
export function checkInteger(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidParameter(name, `an integer from ${min} to ${max}`, value)
  }
  return value
}

/**
 * The TypeError a filter's `toJSON` throws: a filter has no JSON form (`JSON.stringify(filter)`
 * would write internals nothing can load), so the mistake is loud and points at `export()`.
 */
export function noJsonForm(): TypeError {
  return new TypeError('a Bloom filter has no JSON form: use export() (a Uint8Array snapshot)')
}

/**
 * `keys` if it is a (synchronous) iterable; `BLOOM_INVALID_PARAMETER` naming it otherwise. Each key
 * is checked as it is hashed. A string is iterable too, and would add or check each of its
 * characters ('abc' → 'a', 'b', 'c'), so it is refused, and so is a typed array (its elements are
 * numbers: a byte key is passed as [bytes]); so is an async iterable (a stream, an async
 * generator), which these calls cannot read: collect it in batches and pass each batch.
 */
export function checkKeys<T>(keys: Iterable<T>): Iterable<T> {
  if (typeof keys === 'string') {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `keys must be an iterable such as an array, not a string (one key per character); pass [${describe(keys)}] or call add()/has()`)
  }
  if (ArrayBuffer.isView(keys)) {
    // Iterable too, as numbers (each an invalid key), and a detached one throws a TypeError when read.
    throw new BloomError('BLOOM_INVALID_PARAMETER', `keys must be an iterable of keys, not a ${describe(keys)} (its elements are numbers); pass [bytes] for one byte key`)
  }
  if (keys === null || keys === undefined || typeof (keys as Partial<Iterable<T>>)[Symbol.iterator] !== 'function') {
    const allowed = 'an iterable (an array, a Set, a generator) of strings or Uint8Arrays'
    if (typeof (keys as Partial<AsyncIterable<T>> | null | undefined)?.[Symbol.asyncIterator] === 'function') {
      throw new BloomError('BLOOM_INVALID_PARAMETER', `keys must be ${allowed}; got an async iterable: read it in batches and pass each batch as an array`)
    }
    throw invalidParameter('keys', allowed, keys)
  }
  return keys
}

/** `BLOOM_INCOMPATIBLE` for merging a plain and a counting filter (counterBits 0 is plain). */
export function mixedKindsError(mine: number, theirs: number): BloomError {
  const kind = (counterBits: number) => (counterBits === 0 ? 'plain' : 'counting')
  return new BloomError('BLOOM_INCOMPATIBLE', `merge: a ${kind(mine)} filter and a ${kind(theirs)} filter do not merge`)
}

/** @throws BloomError `BLOOM_CLOSED`. */
export function closedError(): BloomError {
  return new BloomError('BLOOM_CLOSED', 'the filter is closed')
}
