import { checkInteger, checkOptionNames, checkParameters, invalidParameter, optionChecks, shardBitsOf } from '@bloomkit/core/store'
import { BloomError, sizeFilter, type FilterParameters, type FilterParametersInput, type SizingOptions } from '@bloomkit/core'
import { DEFAULT_FEED_LENGTH, MAX_FEED_LENGTH } from './layout/feed.js'
import { replicaSettingsOf, type ReplicaOptions, type ReplicaSettings } from './replica/replica-options.js'

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

/** How a filter's batches reach Redis: {@link RedisStoreOptions} checked, with every default filled in. */
export interface StoreSettings {
  readonly keysPerCommand: number
  /** 0: never a whole shard. */
  readonly scanBytesPerKey: number
  readonly blockReads: boolean
  readonly batchConnection: boolean
  /** Milliseconds. */
  readonly coalesceWait: number
}

/** The defaults of {@link RedisStoreOptions}. */
export const DEFAULT_STORE_SETTINGS: StoreSettings = { keysPerCommand: 512, scanBytesPerKey: 512, blockReads: true, batchConnection: true, coalesceWait: DEFAULT_COALESCE_WAIT_MS }

/**
 * The options of a Redis call, checked once by {@link checkRedisOptions} and resolved with their
 * defaults: what the layers below the public methods receive (as LevelDB's `StoreSettings`), so
 * that none reads an options object again.
 */
export interface RedisSettings {
  /** Each command's bound, in ms (Infinity: the client's own). */
  readonly timeout: number
  /** How long open and create wait for a filter another process is creating or importing, in ms. */
  readonly lockWait: number
  /** A new filter's TTL in ms; 0 for none. */
  readonly ttlMs: number
  /** A new filter's feed length (`feed`, `feedLength`, implied by `replica`); 0 for no feed. */
  readonly feedLength: number
  /** The replica asked for, or undefined for none. */
  readonly replica: ReplicaSettings | undefined
  readonly store: StoreSettings
  readonly replaceParameters: boolean
  readonly force: boolean
}

/**
 * Checks the options of any Redis call, the backend's one place for it, and resolves them: core's
 * checks of the object, its names (a typo such as `capcity` would otherwise leave a default in
 * place) and own properties, and the values of core's options; then the values of the backend's own
 * options, even where this call does not use them (an open's `ttl`). Every entry checks against all
 * the backend's names, not its own subset: a LevelDB-only option such as `cacheBytes` is refused.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
 */
export function checkRedisOptions(call: string, options: unknown): RedisSettings {
  checkOptionNames(call, options, ['sizing', 'layered', 'counting', 'kind'], REDIS_OPTIONS)
  const { timeout, keysPerCommand, scanBytesPerKey, lockWait, coalesceWait, blockReads, batchConnection, ttl, replaceParameters, force } = options as RedisReplaceOptions
  const integer = (name: string, value: number | undefined, min: number, max: number, fallback: number) => (value === undefined ? fallback : checkInteger(name, value, min, max))
  const flag = (name: string, value: boolean | undefined, fallback: boolean) => (value === undefined ? fallback : checkBoolean(name, value))
  const defaults = DEFAULT_STORE_SETTINGS
  // In the order the checks have always run, so that of two bad options the same one is named.
  const timeoutMs = timeout === Infinity ? Infinity : integer('timeout', timeout, 1, 2 ** 31 - 1, DEFAULT_TIMEOUT_MS)
  const perCommand = integer('keysPerCommand', keysPerCommand, 1, 65_536, defaults.keysPerCommand)
  const scanBytes = integer('scanBytesPerKey', scanBytesPerKey, 0, 2 ** 31 - 1, defaults.scanBytesPerKey)
  const lockWaitMs = integer('lockWait', lockWait, 0, 2 ** 31 - 1, DEFAULT_LOCK_WAIT_MS)
  const coalesceMs = integer('coalesceWait', coalesceWait, 0, 1000, defaults.coalesceWait)
  const ttlMs = integer('ttl', ttl, 1, 2 ** 31 - 1, 0) * 1000
  const store = { keysPerCommand: perCommand, scanBytesPerKey: scanBytes, coalesceWait: coalesceMs, blockReads: flag('blockReads', blockReads, defaults.blockReads), batchConnection: flag('batchConnection', batchConnection, defaults.batchConnection) }
  const replacing = flag('replaceParameters', replaceParameters, false)
  const forced = flag('force', force, false)
  const { feedLength, replica } = feedOf(options as RedisFeedOptions & RedisFilterOptions)
  return { timeout: timeoutMs, lockWait: lockWaitMs, ttlMs, feedLength, replica, store, replaceParameters: replacing, force: forced }
}

/** The default of {@link RedisFilterOptions.lockWait}, in milliseconds. */
export const DEFAULT_LOCK_WAIT_MS = 60_000

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
 * The feed a new filter gets from `feed` and `feedLength` (checked): its length, 0 for none; and
 * the replica asked for, which implies a feed.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` for a `feed` that is not a boolean, a bad `replica`,
 *   a `feedLength` out of range or without `feed: true`.
 */
function feedOf(options: RedisFeedOptions & Pick<RedisFilterOptions, 'replica'>): { readonly feedLength: number; readonly replica: ReplicaSettings | undefined } {
  const { feed, feedLength } = options
  if (feed !== undefined) checkBoolean('feed', feed)
  // A replica follows the feed: asking for one asks for the feed, unless feed: false says otherwise.
  const replica = replicaSettingsOf(options.replica)
  if (replica !== undefined && feed === false) throw new BloomError('BLOOM_INVALID_PARAMETER', 'replica: a replica follows the filter\'s feed; leave feed out (replica implies feed: true), or drop replica')
  const fed = feed === true || replica !== undefined
  if (feedLength !== undefined) {
    if (!fed) throw new BloomError('BLOOM_INVALID_PARAMETER', `feedLength is the length of the filter's feed: pass it with feed: true (got feed ${String(feed)})`)
    checkInteger('feedLength', feedLength, 1, MAX_FEED_LENGTH)
  }
  return { feedLength: fed ? (feedLength ?? DEFAULT_FEED_LENGTH) : 0, replica }
}

/**
 * Refuses `feed: true` for a counting filter: a remove clears counters, which an entry of keys
 * added cannot say (it would need entries of its own), and a replica of a counting filter would
 * hold 4× the bits of a plain one.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `replica` or `feed`.
 */
export function refuseFeed(settings: Pick<RedisSettings, 'replica' | 'feedLength'>): void {
  if (settings.replica !== undefined) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', 'replica: a counting filter has no replica (it has no feed: a remove would need entries of its own, and its counters take 4× the bits); leave replica out, or use a plain filter')
  }
  if (settings.feedLength > 0) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', 'feed: a counting filter has no feed (a remove would need entries of its own, and a replica of one would hold 4× the bits); leave feed out, or use a plain filter')
  }
}

/** The default of {@link RedisStoreOptions.timeout}, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 5000

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
