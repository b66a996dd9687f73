import { BloomError, checkInteger, invalidParameter } from './errors.js'
import { estimateErrorRate, optimalParameters } from './sizing.js'

/** The most bits one shard holds: 2^32, which is also a Redis string's limit (512 MiB). */
export const MAX_SHARD_BITS = 2 ** 32
/** The most shards a filter may have. */
export const MAX_SHARDS = 65_536
/** The most bit positions per key. */
export const MAX_HASHES = 64
/** The only hash scheme so far: XXH32 with two seeds, fmix32 shard choice, enhanced double hashing. */
export const HASH_SCHEME = 1

/**
 * Everything that decides where a key's bits go. Two filters can be merged, and a snapshot read
 * into a store, only when these are identical. Stored in every snapshot and by every backend.
 */
export interface FilterParameters {
  /** Total bits: `shards × shardBits`, where shardBits is a multiple of 8 from 8 to 2^32. */
  readonly bits: number
  /** Bit positions per key (k), from 1 to 64. */
  readonly hashes: number
  /** Shards the bits are split into, from 1 to 65 536; each key lives in one. */
  readonly shards: number
  /** Seed of the key hash, an unsigned 32-bit integer. Keep it secret to keep positions unguessable. */
  readonly seed: number
}

/** Options that size a new filter. */
export interface SizingOptions {
  /** The number of distinct keys the filter is sized for; a positive safe integer. */
  readonly capacity: number
  /** The target false-positive probability at `capacity` keys, in (0, 1). */
  readonly errorRate: number
  /**
   * How many shards to split the bits into, from 1 to 65 536. Default: as few as keep each shard
   * at most 2^32 bits. More shards are sized up so that the error rate stays on target.
   */
  readonly shards?: number
  /** Seed of the key hash, an unsigned 32-bit integer. Default: 0. */
  readonly seed?: number
}

/** Bits in each shard. */
export function shardBitsOf(parameters: FilterParameters): number {
  return parameters.bits / parameters.shards
}

/** Bytes in each shard. */
export function shardBytesOf(parameters: FilterParameters): number {
  return parameters.bits / parameters.shards / 8
}

function roundUpToBytes(bits: number): number {
  return Math.ceil(bits / 8) * 8
}

/**
 * Turns capacity and error rate into full parameters. With one shard the bits are Guava's (rounded
 * up to whole bytes); with more, each shard is grown until the expected error rate, averaged over
 * how unevenly keys spread across shards, is no worse than the one-shard filter's.
 *
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
 */
export function sizeFilter(options: SizingOptions): FilterParameters {
  if (options === null || typeof options !== 'object') throw invalidParameter('options', 'an object', options)
  const { bits, hashes } = optimalParameters(options)
  if (hashes > MAX_HASHES) {
    throw invalidParameter('errorRate', `large enough to need at most ${MAX_HASHES} hashes (about 1e-19 or more)`, options.errorRate)
  }
  const seed = checkInteger('seed', options.seed ?? 0, 0, 0xffffffff)
  const requestedShards = options.shards === undefined ? undefined : checkInteger('shards', options.shards, 1, MAX_SHARDS)
  const items = options.capacity
  const target = estimateErrorRate({ bits, hashes, items })
  let shards = requestedShards ?? Math.ceil(bits / MAX_SHARD_BITS)
  for (;;) {
    let shardBits = Math.max(roundUpToBytes(Math.ceil(bits / shards)), roundUpToBytes(hashes))
    if (shards > 1) {
      // Grow by 0.1 % steps: the first size on target is within 0.1 % of the smallest one.
      while (estimateErrorRate({ bits: shardBits * shards, hashes, items, shards }) > target) {
        shardBits = roundUpToBytes(shardBits * 1.001)
      }
    }
    if (shardBits <= MAX_SHARD_BITS) return { bits: shardBits * shards, hashes, shards, seed }
    if (requestedShards !== undefined) {
      throw invalidParameter('shards', `enough to keep each shard at most 2^32 bits (at least ${shards + 1} here)`, shards)
    }
    shards++
  }
}

/**
 * Validates explicit parameters, as read from a snapshot, a store or a user who knows the sizes.
 *
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the first field out of range.
 */
export function checkParameters(parameters: FilterParameters): FilterParameters {
  if (parameters === null || typeof parameters !== 'object') throw invalidParameter('parameters', 'an object', parameters)
  const hashes = checkInteger('hashes', parameters.hashes, 1, MAX_HASHES)
  const shards = checkInteger('shards', parameters.shards, 1, MAX_SHARDS)
  const seed = checkInteger('seed', parameters.seed, 0, 0xffffffff)
  const bits = checkInteger('bits', parameters.bits, 8, MAX_SHARDS * MAX_SHARD_BITS)
  const shardBits = bits / shards
  if (!Number.isInteger(shardBits) || shardBits % 8 !== 0 || shardBits > MAX_SHARD_BITS || shardBits < hashes) {
    throw invalidParameter(
      'bits',
      `shards × bits per shard, with bits per shard a multiple of 8 from max(8, hashes) to 2^32 (shards = ${shards}, hashes = ${hashes})`,
      bits,
    )
  }
  return { bits, hashes, shards, seed }
}

/** Whether two filters place every key on the same bits. */
export function sameParameters(a: FilterParameters, b: FilterParameters): boolean {
  return a.bits === b.bits && a.hashes === b.hashes && a.shards === b.shards && a.seed === b.seed
}

/** Throws `BLOOM_INCOMPATIBLE`, listing both sets of parameters, unless they are the same. */
export function assertSameParameters(expected: FilterParameters, actual: FilterParameters, what: string): void {
  if (sameParameters(expected, actual)) return
  throw new BloomError(
    'BLOOM_INCOMPATIBLE',
    `${what} has different parameters: expected ${formatParameters(expected)}, got ${formatParameters(actual)}`,
  )
}

/** `bits=… hashes=… shards=… seed=…`, for messages. */
export function formatParameters(p: FilterParameters): string {
  return `bits=${p.bits} hashes=${p.hashes} shards=${p.shards} seed=${p.seed}`
}

