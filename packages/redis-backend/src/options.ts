import { checkInteger, checkOptionNames, checkParameters, invalidParameter, optionChecks, shardBitsOf } from '@bloomkit/core/store'
import { BloomError, sizeFilter, type FilterParameters, type FilterParametersInput, type SizingOptions } from '@bloomkit/core'
import { DEFAULT_FEED_LENGTH, MAX_FEED_LENGTH } from './layout/feed.js'
import { replicaSettingsOf, type ReplicaOptions } from './replica/replica-options.js'

const { checkBoolean } = optionChecks

/**
 * The largest shard by default, in bits: 4 MiB less the marker and Redis's string header, so that
 * a shard key is one 4 MiB allocation (jemalloc rounds up to size classes: 4 MiB + 1 byte takes
 * 5 MiB). Slot migration (MIGRATE) blocks both nodes for the whole key: measured here ~3 ms per
 * MiB on loopback, so 4 MiB keeps it to ~12–20 ms.
 */
export const DEFAULT_SHARD_BITS = ((4 << 20) - 16) * 8
/** A shard's bits plus its 4-byte marker must fit a Redis string (2^32 bits). */
export const MAX_REDIS_SHARD_BITS = 2 ** 32 - 32

/** Tuning of how batches reach Redis; every field has a measured default. */
export interface RedisStoreOptions {
  /**
   * Milliseconds a call waits for Redis before it rejects with `BLOOM_STORE_UNAVAILABLE`, from 1
   * to 2^31 − 1, or `Infinity` to rely on the client's own timeouts. Applies per command (a batch
   * sends several). Default: 5000.
   */
  readonly timeout?: number
  /** Keys per BITFIELD command, from 1 to 65 536. Default: 512 (measured best of 256–4096 on loopback). */
  readonly keysPerCommand?: number
  /**
   * When a batch puts many keys into one shard, reading or ORing the whole shard costs less than
   * a BITFIELD operation per bit: a batch does so for a shard of at most 4 MiB that holds at
   * least one of its keys per `scanBytesPerKey` bytes. From 0 (always BITFIELD) to 2^31 − 1.
   * Default: 512, where a whole-shard read or OR moves at most ~2× (read) or ~4× (OR) the bytes
   * the BITFIELD commands would, and was measured ~4× (OR) to ~15× (read) cheaper in CPU.
   */
  readonly scanBytesPerKey?: number
  /**
   * For the blocked layout (the default), answer a batch by reading each key's 64-byte block
   * with one script call per up to 256 keys and testing the bits in the client, and let an add
   * whose previous batch was mostly present keys write only the keys not yet present. `false`
   * sends BITFIELD operations per bit instead. Default: true.
   */
  readonly blockReads?: boolean
  /**
   * Send batches over a connection of their own to each Redis node, opened with the client's own
   * options (ioredis `duplicate()`) on first use: per node a batch is one write of RESP encoded by
   * bloomkit, and its replies are read in place instead of as a JS value per reply. Checks read
   * each key's 64-byte block with GETRANGE inside MULTI/EXEC (blocked layout). While such a
   * connection cannot be opened, batches take the client's own connection. `false`: always the
   * client's connection. Default: true.
   */
  readonly batchConnection?: boolean
  /**
   * Single `add`/`has` calls (and batches of up to 64 keys) are gathered into shared batches:
   * those made in the same tick are sent together when it ends; while a gathered batch is in
   * flight, new calls wait for it, up to this many milliseconds, and then travel together. From
   * 0 (never wait for a batch in flight) to 1000. Default: 2 ({@link DEFAULT_COALESCE_WAIT_MS}).
   */
  readonly coalesceWait?: number
}

/** The default of {@link RedisStoreOptions.coalesceWait}, in milliseconds. */
export const DEFAULT_COALESCE_WAIT_MS = 2

/** Options of {@link RedisBloomFilter.open} (and the other constructors). */
export interface RedisFilterOptions extends RedisStoreOptions {
  /**
   * Milliseconds `create`/`open` wait for a filter that another process is still creating or
   * importing before failing with `BLOOM_LOCKED`, from 0 to 2^31 − 1. Default: 60 000.
   */
  readonly lockWait?: number
  /**
   * Answer through a replica: the filter's bits loaded into this process and kept current from
   * its feed (docs/SPEC.md 9.13), so that `has` finds a present key without a round trip and
   * proves an absent one with one small read of the feeds that concurrent calls share. `true`, or
   * {@link ReplicaOptions} (`maxBytes`, `maxStaleness`, per layer for a layered filter, each of
   * whose layers gets a replica of its own). For fixed and layered filters with a feed (`create`
   * with `replica` gives it one: it implies `feed: true`); a filter without one is
   * `BLOOM_INCOMPATIBLE`, a counting filter `BLOOM_INVALID_PARAMETER`. `close()` stops it.
   * Default: none (every call asks Redis).
   */
  readonly replica?: boolean | ReplicaOptions
}

/** Whether a new filter gets a feed (docs/SPEC.md 9.12), and how long it is. */
export interface RedisFeedOptions {
  /**
   * Give the filter a feed: per shard a Redis Stream to which every add appends its keys' hash
   * pairs in the same atomic step as their bits, and which every replacement of the shard
   * (rebuild, import, clear) resets; what a replica in another process follows to stay current.
   * The filter is stored in format 2, which releases that do not know the feed refuse to open
   * (`BLOOM_UNSUPPORTED_VERSION`), so none can write around it. An existing filter is opened as
   * it is if it has a feed, and refused (`BLOOM_INCOMPATIBLE`) if it has none. Not for counting
   * filters. Default: false.
   */
  readonly feed?: boolean
  /**
   * With `feed`: the entries each shard's feed keeps at least (`XADD … MAXLEN ~`; Redis trims
   * whole stream nodes, so a few more stay). An entry is one add command (up to `keysPerCommand`
   * keys, 8 bytes each), so a feed takes up to about `feedLength × keysPerCommand × 8` bytes per
   * shard; a replica that falls further behind loads the shard again. From 1 to 2^31 − 1; an
   * existing filter keeps its own. Default: 1024.
   */
  readonly feedLength?: number
}

/** Options of {@link RedisBloomFilter.fromParameters} and {@link RedisBloomFilter.import}. */
export interface RedisNewFilterOptions extends RedisFilterOptions, RedisFeedOptions {
  /**
   * Seconds until the whole filter (meta and shards) expires, from 1 to 2^31 − 1. Default: none.
   * Change it later with {@link RedisBloomFilter.setTtl}.
   */
  readonly ttl?: number
}

/** Options of an import over a filter that exists (part of `RedisBloomFilter.import`'s options). */
export interface RedisReplaceOptions extends RedisNewFilterOptions {
  /**
   * When `name` holds a filter with other parameters (size, hashes, shards, seed or layout),
   * replace it rather than fail with `BLOOM_INCOMPATIBLE`. The new filter is staged in keys no
   * reader reads while the old one keeps answering; then the meta is switched to it in one step
   * and its shards are swapped in (docs/SPEC.md 9.6). Instances that had the old filter open then
   * fail with `BLOOM_DATA_LOST` ("open it anew"), never answer from a partial filter: open it
   * again. Default: false.
   */
  readonly replaceParameters?: boolean
  /**
   * Take the lock of an existing filter even if a rebuild, import or clear holds it (one whose
   * process died), clearing what a killed import staged. Default: false (`BLOOM_LOCKED`).
   */
  readonly force?: boolean
}

/** Options of {@link RedisBloomFilter.create}: sizing, TTL and store tuning. */
export interface RedisCreateOptions extends SizingOptions, RedisNewFilterOptions {}

/** Options of {@link RedisBloomFilter.rebuild}. */
export interface RebuildOptions {
  /**
   * Take the filter's lock even if another rebuild, import or clear holds it (one that crashed).
   * Default: false, and a held lock fails with `BLOOM_LOCKED`.
   */
  readonly force?: boolean
}

/** The backend's own option names, written as a Record so that an option added to the types must be listed. */
const REDIS_OPTIONS = Object.keys(
  {
    timeout: true,
    keysPerCommand: true,
    scanBytesPerKey: true,
    blockReads: true,
    batchConnection: true,
    coalesceWait: true,
    lockWait: true,
    ttl: true,
    replaceParameters: true,
    force: true,
    feed: true,
    feedLength: true,
    replica: true,
  } satisfies Record<keyof RedisReplaceOptions, true>,
)

/**
 * Checks the options of any Redis call, the backend's one place for it: core's checks of the
 * object, its names (a typo such as `capcity` would otherwise leave a default in place) and own
 * properties, and the values of core's options; then the values of the backend's own options, even
 * where this call does not use them (an open's `ttl`). Every entry checks against all the backend's
 * names, not its own subset: one call's options are passed on to another (create opens, a layered
 * filter imports its layers), and a LevelDB-only option such as `cacheBytes` is still refused.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
 */
export function checkRedisOptions(call: string, options: unknown): void {
  checkOptionNames(call, options, ['sizing', 'layered', 'counting', 'kind'], REDIS_OPTIONS)
  const { timeout, keysPerCommand, scanBytesPerKey, lockWait, coalesceWait, blockReads, batchConnection, ttl, replaceParameters, force } = options as RedisReplaceOptions
  if (timeout !== undefined && timeout !== Infinity) checkInteger('timeout', timeout, 1, 2 ** 31 - 1)
  if (keysPerCommand !== undefined) checkInteger('keysPerCommand', keysPerCommand, 1, 65_536)
  if (scanBytesPerKey !== undefined) checkInteger('scanBytesPerKey', scanBytesPerKey, 0, 2 ** 31 - 1)
  if (lockWait !== undefined) checkInteger('lockWait', lockWait, 0, 2 ** 31 - 1)
  if (coalesceWait !== undefined) checkInteger('coalesceWait', coalesceWait, 0, 1000)
  if (ttl !== undefined) checkInteger('ttl', ttl, 1, 2 ** 31 - 1)
  if (blockReads !== undefined) checkBoolean('blockReads', blockReads)
  if (batchConnection !== undefined) checkBoolean('batchConnection', batchConnection)
  if (replaceParameters !== undefined) checkBoolean('replaceParameters', replaceParameters)
  if (force !== undefined) checkBoolean('force', force)
  feedLengthOf(options as RedisFeedOptions & RedisFilterOptions)
}

/** The names of {@link RebuildOptions}. */
const REBUILD_OPTIONS = Object.keys({ force: true } satisfies Record<keyof RebuildOptions, true>)

/**
 * Checks {@link RebuildOptions} and returns whether to take a held lock (`force`, default false).
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option (`force: 'yes'` is not `true`).
 */
export function checkRebuildOptions(options: RebuildOptions): { readonly force: boolean } {
  checkOptionNames('rebuild', options, [], REBUILD_OPTIONS)
  return { force: options.force === undefined ? false : checkBoolean('force', options.force) }
}

/**
 * The feed a new filter gets from `feed` and `feedLength` (checked): its length, 0 for none.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` for a `feed` that is not a boolean, a `feedLength`
 *   out of range or without `feed: true`.
 */
export function feedLengthOf(options: RedisFeedOptions & Pick<RedisFilterOptions, 'replica'>): number {
  const { feed, feedLength } = options
  if (feed !== undefined) checkBoolean('feed', feed)
  // A replica follows the feed: asking for one asks for the feed, unless feed: false says otherwise.
  const replica = replicaSettingsOf(options.replica) !== undefined
  if (replica && feed === false) throw new BloomError('BLOOM_INVALID_PARAMETER', 'replica: a replica follows the filter\'s feed; leave feed out (replica implies feed: true), or drop replica')
  const fed = feed === true || replica
  if (feedLength !== undefined) {
    if (!fed) throw new BloomError('BLOOM_INVALID_PARAMETER', `feedLength is the length of the filter's feed: pass it with feed: true (got feed ${String(feed)})`)
    checkInteger('feedLength', feedLength, 1, MAX_FEED_LENGTH)
  }
  return fed ? (feedLength ?? DEFAULT_FEED_LENGTH) : 0
}

/**
 * Refuses `feed: true` for a counting filter: a remove clears counters, which an entry of keys
 * added cannot say (it would need entries of its own), and a replica of a counting filter would
 * hold 4× the bits of a plain one.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `feed`.
 */
export function refuseFeed(options: RedisFeedOptions & Pick<RedisFilterOptions, 'replica'>): void {
  if (replicaSettingsOf(options.replica) !== undefined) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', 'replica: a counting filter has no replica (it has no feed: a remove would need entries of its own, and its counters take 4× the bits); leave replica out, or use a plain filter')
  }
  if (feedLengthOf(options) > 0) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', 'feed: a counting filter has no feed (a remove would need entries of its own, and a replica of one would hold 4× the bits); leave feed out, or use a plain filter')
  }
}

/** The default of {@link RedisStoreOptions.timeout}, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 5000

/** The `timeout` option (checked by {@link checkRedisOptions}), or its default. */
export function timeoutOf(options: RedisStoreOptions): number {
  return options.timeout ?? DEFAULT_TIMEOUT_MS
}

/** The `ttl` option (checked by {@link checkRedisOptions}) in milliseconds, 0 for none. */
export function ttlMsOf(options: RedisNewFilterOptions): number {
  return options.ttl === undefined ? 0 : options.ttl * 1000
}

/** Core's parameter checks, plus the shard size a Redis string can hold. */
export function checkRedisParameters(parameters: FilterParametersInput, counterBits = 0): FilterParameters {
  const checked = checkParameters(parameters)
  const width = Math.max(1, counterBits)
  if (shardBitsOf(checked) * width > MAX_REDIS_SHARD_BITS) {
    throw invalidParameter('shards', `enough to keep each shard at most 2^32 − 32 bits (${MAX_REDIS_SHARD_BITS}) of ${width === 1 ? 'bits' : 'counters'} on Redis`, checked.shards)
  }
  return checked
}

/**
 * The parameters `RedisBloomFilter.create` picks for these options (to size a filter before creating
 * it, or to build one elsewhere with the same layout): without `shards`, as many as keep each at
 * most {@link DEFAULT_SHARD_BITS}.
 * @param counterBits Bits per position: 0 for a plain filter, 4 for a counting one (what
 *   `RedisCountingFilter.create` sizes with: each shard string holds that many bits per position).
 * @throws BloomError `BLOOM_INVALID_PARAMETER` as core's `sizeFilter`.
 */
export function sizeRedisFilter(options: SizingOptions, counterBits = 0, size: (options: SizingOptions) => FilterParameters = sizeFilter): FilterParameters {
  if (options === null || typeof options !== 'object') throw invalidParameter('options', 'an object', options)
  if (options.shards !== undefined) return size(options)
  // A counting filter's shard strings hold 4 bits per position: as many more shards, so each stays under the limit.
  const limit = DEFAULT_SHARD_BITS / Math.max(1, counterBits)
  // Classic sharding grows each shard a little (to keep the error rate), so count again until they fit.
  let shards = Math.max(1, Math.ceil(size(options).bits / limit))
  let parameters = size({ ...options, shards })
  while (shardBitsOf(parameters) > limit) parameters = size({ ...options, shards: ++shards })
  return parameters
}
