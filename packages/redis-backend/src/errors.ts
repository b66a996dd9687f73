import { BloomError } from '@bloomkit/core'

/** The error a Lua script raises when a shard key lacks this filter's marker. */
export const DATA_LOST_REPLY = 'BLOOMKIT_DATA_LOST'
/** The error a layered meta's script raises when the meta is gone (expired or destroyed). */
export const NOT_FOUND_REPLY = 'BLOOMKIT_NOT_FOUND'
/** The error a Lua script raises when a meta no longer matches its `check` field. */
export const CORRUPT_REPLY = 'BLOOMKIT_CORRUPT_STORE'

/**
 * Turns whatever ioredis rejected with into a coded `BloomError`, keeping it as `cause`:
 * a missing marker is `BLOOM_DATA_LOST`, WRONGTYPE or a meta that fails its check is `BLOOM_CORRUPT_STORE`, anything else
 * (connection refused or closed, retries exhausted, OOM, a Cluster that is down) is
 * `BLOOM_STORE_UNAVAILABLE`.
 *
 * @param what The operation and key, for the message.
 */
export function storeError(error: unknown, what: string): BloomError {
  if (error instanceof BloomError) return error
  const message = error instanceof Error ? error.message : String(error)
  if (message.includes(DATA_LOST_REPLY)) return dataLost(what, error)
  if (message.includes(CORRUPT_REPLY)) {
    return new BloomError('BLOOM_CORRUPT_STORE', `${what}: ${message.slice(message.indexOf(CORRUPT_REPLY) + CORRUPT_REPLY.length + 2)}; restore the original values, or rebuild the filter under a new name from its source`, { cause: error })
  }
  if (message.startsWith('WRONGTYPE')) {
    return new BloomError('BLOOM_CORRUPT_STORE', `${what}: a key of the filter holds a value of another type (${message})`, { cause: error })
  }
  return new BloomError('BLOOM_STORE_UNAVAILABLE', `${what}: Redis failed: ${message}`, { cause: error })
}

/** `BLOOM_DATA_LOST` for a shard key that is missing or belongs to another filter. */
export function dataLost(what: string, cause?: unknown): BloomError {
  return new BloomError(
    'BLOOM_DATA_LOST',
    `${what}: a shard key is missing or not this filter's (evicted, expired, deleted, or lost in a failover); ` +
      'answering would give false negatives. Rebuild the filter from its source with rebuild(keys), or import a snapshot.',
    cause === undefined ? undefined : { cause },
  )
}

/**
 * Rejects with `BLOOM_STORE_UNAVAILABLE` if `promise` has not settled within `ms` milliseconds,
 * so no call waits on ioredis's reconnection and offline queue for longer than the caller allows.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  if (!Number.isFinite(ms)) return promise
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new BloomError('BLOOM_STORE_UNAVAILABLE', `${what}: no reply from Redis within ${ms} ms (is the server reachable?)`)),
      ms,
    )
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Runs `promise` under a timeout in ms, mapping whatever it rejects with to a coded BloomError. */
export function callRedis<T>(promise: Promise<T>, timeout: number, what: string): Promise<T> {
  return withTimeout(promise, timeout, what).catch((error: unknown) => {
    throw storeError(error, what)
  })
}
