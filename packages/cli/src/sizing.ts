import { sizeFilter, type BitLayout, type FilterParameters } from '@bloomkit/core'
import { checkParameters, counterKernels, randomSeed, shardBitsOf } from '@bloomkit/core/store'
import { redisBackend } from './backends.js'
import { CliError } from './errors.js'

/** The sizing flags of `build` and `size`. */
export interface SizingFlags {
  readonly capacity?: number
  readonly errorRate?: number
  readonly bits?: number
  readonly hashes?: number
  readonly shards?: number
  readonly seed?: number
  readonly layout?: BitLayout
  /** `--counting`: a counting filter, whose Redis shards hold a 4-bit counter per position. */
  readonly counting?: boolean
}

/**
 * Bits per position as the Redis backend's sizing takes them: a counting filter's counter width
 * (core's), 0 for a plain filter. `RedisCountingFilter.create` sizes with the same value, so the
 * command line's counting filters get the shards the library's get (each shard string ≤ 4 MiB).
 */
export function counterBitsOf({ counting }: { readonly counting?: boolean }): number {
  return counting === true ? counterKernels.COUNTER_BITS : 0
}

/**
 * Parameters from `--capacity/--error-rate` (sized for the target as the library's `create` sizes
 * it: on Redis, shards whose strings stay ≤ 4 MiB, counting filters' included) or from
 * `--bits/--hashes`. Resolves to undefined when neither is given. Without `--seed`, a random
 * secret seed, as the library's `create` picks (keyed hashing: an attacker who cannot read the
 * seed cannot craft keys that read present).
 * @param target.redis Whether the filter goes to Redis.
 * @throws CliError `CLI_USAGE` for a half-given or doubly-given sizing; BloomError for values out of range.
 */
export async function parametersFromFlags(flags: SizingFlags, target: { readonly redis: boolean }): Promise<FilterParameters | undefined> {
  const bySize = flags.capacity !== undefined || flags.errorRate !== undefined
  const byBits = flags.bits !== undefined || flags.hashes !== undefined
  if (bySize && byBits) throw new CliError('CLI_USAGE', 'give either --capacity with --error-rate, or --bits with --hashes, not both')
  if (!bySize && !byBits) return undefined
  // Only a Redis target's sizing needs the Redis backend's rules (backends.ts: loaded on use).
  const redis = target.redis ? await redisBackend() : undefined
  const counterBits = counterBitsOf(flags)
  if (bySize) {
    if (flags.capacity === undefined) throw new CliError('CLI_USAGE', '--error-rate needs --capacity')
    if (flags.errorRate === undefined) throw new CliError('CLI_USAGE', '--capacity needs --error-rate')
    const options = { capacity: flags.capacity, errorRate: flags.errorRate, seed: flags.seed ?? randomSeed(), layout: flags.layout, shards: flags.shards }
    const parameters = redis !== undefined ? redis.sizeRedisFilter(options, counterBits) : sizeFilter(options)
    checkRedisShards(parameters, counterBits, redis?.MAX_REDIS_SHARD_BITS)
    return parameters
  }
  if (flags.bits === undefined) throw new CliError('CLI_USAGE', '--hashes needs --bits')
  if (flags.hashes === undefined) throw new CliError('CLI_USAGE', '--bits needs --hashes')
  const parameters = checkParameters({ bits: flags.bits, hashes: flags.hashes, shards: flags.shards ?? 1, seed: flags.seed ?? randomSeed(), layout: flags.layout })
  checkRedisShards(parameters, counterBits, redis?.MAX_REDIS_SHARD_BITS)
  return parameters
}

/** On Redis (`maxShardBits` given), each shard's string (its bits, or 4-bit counters) must fit a Redis string. */
function checkRedisShards(parameters: FilterParameters, counterBits: number, maxShardBits: number | undefined): void {
  const stringBits = shardBitsOf(parameters) * Math.max(1, counterBits)
  if (maxShardBits !== undefined && stringBits > maxShardBits) {
    const what = counterBits === 0 ? '' : ` (${counterBits}-bit counters: ${stringBits} bits of string)`
    throw new CliError('CLI_USAGE', `--shards must keep each shard at most ${maxShardBits} bits on Redis; these parameters give ${shardBitsOf(parameters)}${what}`)
  }
}

/**
 * Parameters as printed: without the seed unless asked for (`--show-seed`). The seed is the key of
 * the keyed hashing, and output lands in logs and tickets.
 */
export function shownParameters(parameters: FilterParameters, { showSeed }: { readonly showSeed: boolean }): Omit<FilterParameters, 'seed'> & { seed?: number } {
  if (showSeed) return parameters
  const { seed: _seed, ...shown } = parameters
  return shown
}
