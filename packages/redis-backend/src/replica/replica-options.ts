// The `replica` option of open and create: whether a filter answers through a copy of its bits
// in this process (docs/SPEC.md 9.13), and within which bounds of memory and staleness.
import { BloomError } from '@bloomkit/core'
import { checkInteger, invalidParameter } from '@bloomkit/core/store'

/**
 * How a replica of a Redis filter behaves: the bits in this process, kept current from the
 * filter's feed, answering `has` from memory.
 */
export interface ReplicaOptions {
  /**
   * The most bytes the replica's bits may take (the filter's `bits / 8`, plus a few bytes per
   * shard); a larger filter is refused with `BLOOM_INVALID_PARAMETER` naming `maxBytes`. From 1
   * to 2^53 − 1. Default: 512 MiB ({@link DEFAULT_REPLICA_MAX_BYTES}).
   */
  readonly maxBytes?: number
  /**
   * Bounded mode: answer "absent" from the replica's bits without a round trip while the shard's
   * last completed catch-up began at most this many milliseconds ago (so an "absent" may miss an
   * add acknowledged up to this long before the call). From 1 to 3 600 000. Default: none
   * (strict: every "absent" waits for a barrier that began after the call did).
   */
  readonly maxStaleness?: number
}

/** The default of {@link ReplicaOptions.maxBytes}: 512 MiB. */
export const DEFAULT_REPLICA_MAX_BYTES = 512 * 2 ** 20
/** The largest {@link ReplicaOptions.maxStaleness}, in milliseconds: an hour. */
export const MAX_STALENESS_MS = 3_600_000

/** {@link ReplicaOptions} with every default filled in; `maxStaleness` 0 for strict mode. */
export interface ReplicaSettings {
  readonly maxBytes: number
  readonly maxStaleness: number
}

/**
 * The settings of a `replica` option (`true`, or an object of {@link ReplicaOptions}), or
 * undefined when it asks for none (`undefined` or `false`).
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `replica`, `replica.maxBytes` or `replica.maxStaleness`.
 */
export function replicaSettingsOf(replica: unknown): ReplicaSettings | undefined {
  if (replica === undefined || replica === false) return undefined
  if (replica === true) return { maxBytes: DEFAULT_REPLICA_MAX_BYTES, maxStaleness: 0 }
  if (replica === null || typeof replica !== 'object' || Array.isArray(replica)) throw invalidParameter('replica', 'a boolean or an object { maxBytes?, maxStaleness? }', replica)
  const { maxBytes, maxStaleness, ...rest } = replica as ReplicaOptions
  const unknown = Object.keys(rest)
  if (unknown.length > 0) throw new BloomError('BLOOM_INVALID_PARAMETER', `replica: unknown option ${JSON.stringify(unknown[0])} (known: maxBytes, maxStaleness)`)
  return {
    maxBytes: maxBytes === undefined ? DEFAULT_REPLICA_MAX_BYTES : checkInteger('replica.maxBytes', maxBytes, 1, Number.MAX_SAFE_INTEGER),
    maxStaleness: maxStaleness === undefined ? 0 : checkInteger('replica.maxStaleness', maxStaleness, 1, MAX_STALENESS_MS),
  }
}

/**
 * Refuses a replica whose bits would take more than `maxBytes`.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `replica.maxBytes`, the bytes needed and the way out.
 */
export function checkReplicaBytes(name: string, bytes: number, settings: ReplicaSettings): void {
  if (bytes <= settings.maxBytes) return
  throw new BloomError(
    'BLOOM_INVALID_PARAMETER',
    `replica.maxBytes: a replica of filter "${name}" takes ${bytes} bytes (its bits), over maxBytes ${settings.maxBytes}; raise maxBytes, or open it without replica (every call then asks Redis)`,
  )
}
