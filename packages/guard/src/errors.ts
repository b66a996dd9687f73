/**
 * Stable error codes of `@bloomkit/guard`. Each is documented under "Errors" in the package
 * README; a code, once published, never changes meaning.
 */
export type GuardErrorCode =
  /** An option is missing, of the wrong type or out of range; the message names it and its allowed range. */
  | 'GUARD_INVALID_OPTION'
  /** A key is neither a string nor a Uint8Array. */
  | 'GUARD_INVALID_KEY'
  /** `load` threw or rejected; `id` names the key and `cause` holds the error. Nothing was cached. */
  | 'GUARD_LOAD_FAILED'
  /** `load` ran past `loadTimeout`; `id` names the key. Nothing was cached, the next `get` loads again. */
  | 'GUARD_LOAD_TIMEOUT'
  /** `serialize` threw, did not return a string, or returned text that reads back as null; `id` names the key. Nothing was cached. */
  | 'GUARD_SERIALIZE_FAILED'
  /** The filter failed or timed out and `onFilterError` is `'reject'`, or `created`/`warm` could not add to it. */
  | 'GUARD_FILTER_UNAVAILABLE'
  /** `created` or `invalidate` could not update the cache, so a stale entry may remain; retry. */
  | 'GUARD_CACHE_UNAVAILABLE'
  /** The guard was closed. */
  | 'GUARD_CLOSED'

/** The error class `@bloomkit/guard` throws for anything but plain programming mistakes. */
export class GuardError extends Error {
  /** A stable, documented code; match on this rather than on the message. */
  readonly code: GuardErrorCode
  /** The key the failed operation was for, when there is one. */
  readonly id: string | Uint8Array | undefined

  constructor(code: GuardErrorCode, message: string, options: { cause?: unknown; id?: string | Uint8Array } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GuardError'
    this.code = code
    this.id = options.id
  }
}

/** `GUARD_INVALID_OPTION` naming the option, the allowed range and what was given. */
export function invalidOption(name: string, allowed: string, got: unknown): GuardError {
  return new GuardError('GUARD_INVALID_OPTION', `${name} must be ${allowed}; got ${describe(got)}`)
}

/** A short, safe rendering of a value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'function') return 'a function'
  if (value instanceof Uint8Array) return `Uint8Array(${value.length})`
  if (value === null || typeof value !== 'object') return String(value)
  // Not String(value), which is "[object Object]" for a plain object and says nothing.
  if (Array.isArray(value)) return `an array of ${value.length}`
  const prototype = Object.getPrototypeOf(value) as unknown
  if (prototype === Object.prototype || prototype === null) {
    const keys = Object.keys(value)
    return keys.length === 0 ? 'an empty object' : `an object { ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''} }`
  }
  return `a ${Object.prototype.toString.call(value).slice(8, -1)}`
}

/**
 * The message of a thrown value, for an error that wraps it: an Error's message, a thrown object's
 * `message` or its JSON (a driver that rejects with `{ code: 'ECONNRESET' }` is read as such, not as
 * "[object Object]"), anything else as {@link describe} shows it.
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message
  if (error === null || typeof error !== 'object') return typeof error === 'string' ? error : describe(error)
  const { message } = error as { message?: unknown }
  if (typeof message === 'string') return message
  try {
    const json = JSON.stringify(error)
    if (json !== undefined && json !== '{}') return json.length > 200 ? `${json.slice(0, 200)}…` : json
  } catch {
    // a cycle or a BigInt: described instead
  }
  return describe(error)
}
