import { BloomError, BloomFilter, type BloomKey, type FilterParametersInput } from '@bloomkit/core'
import { checkInteger, checkOptionNames, createKeyHasher, earlierSizeFilter, isLayeredOptions, newFilterParameters, optionChecks, snapshotSources } from '@bloomkit/core/store'
import type { ShardGenerations } from './layout/shard-generations.js'
import { createOrOpenShardFilter, expireShardFilter, openShardFilter } from './layout/shard-filter.js'
import { importSnapshot, type SnapshotSource } from './operations/import.js'
import { LayeredRedisFilter, type LayeredRedisOpenOptions, type LayeredRedisOptions } from './layered/layered-redis-filter.js'
import { checkName } from './layout/key-names.js'
import { abandon, lockMeta, readMeta, unlockMeta } from './layout/meta-lock.js'
import { readStoredFilter, type RedisFilterKind } from './layout/stored-filter.js'
import type { FilterMeta } from './layout/meta.js'
import { checkClient, type RedisClient } from './wire/client.js'
import { checkRedisOptions, checkRebuildOptions, sizeRedisFilter, type RebuildOptions, type RedisCreateOptions, type RedisFilterOptions, type RedisReplaceOptions, type RedisNewFilterOptions, type RedisSettings } from './options.js'
import { rebuild } from './operations/rebuild.js'
import { destroyFilter } from './operations/destroy.js'
import { RedisBitStore } from './bits/redis-bit-store.js'
import { RedisCountingFilter } from './counting/redis-counting-filter.js'
import type { Replica, ReplicaStatus } from './replica/replica.js'
import { startReplica } from './replica/start-replica.js'

const { peekKind, wholeSnapshot } = snapshotSources

export type { RedisFilterKind }

/** Options of {@link RedisBloomFilter.open}: the store's, a rotating filter's `clock`, and `kind` to insist on one kind (default: either). */
export type RedisOpenOptions = LayeredRedisOpenOptions & { readonly kind?: RedisFilterKind }

/** Options of {@link RedisBloomFilter.import}: as for a new filter, a rotating filter's `clock`, and `kind` as for `open`. */
export type RedisImportOptions = RedisReplaceOptions & { readonly clock?: () => number; readonly kind?: RedisFilterKind }

/** Each filter's store, for {@link storeOf}: the store is no public member of the filter. */
const stores = new WeakMap<BloomFilter<false>, RedisBitStore>()

/**
 * The store doing the I/O of `filter` (a `RedisBloomFilter`), for the test suite's direct store
 * calls (core's `bitStoreSuite` runs on it). Exported from this module only, not from the package:
 * the command line reads a filter's fill by the public `countSetBits()`. Typed by core's class, so
 * that tests may pass a filter typed by the package's entry.
 * @internal
 */
export function storeOf(filter: BloomFilter<false>): RedisBitStore {
  const store = stores.get(filter)
  if (store === undefined) throw new BloomError('BLOOM_INCOMPATIBLE', 'storeOf: not a RedisBloomFilter')
  return store
}

/**
 * A Bloom filter stored in Redis (standalone or Cluster, Redis ≥ 6.2, no modules) under a name,
 * shared by every process that opens that name. Every method returns a Promise.
 *
 * @example
 * const redis = new Redis({ maxRetriesPerRequest: 1, connectTimeout: 2000 })
 * const ids = await RedisBloomFilter.create(redis, 'user-ids', { capacity: 1_000_000, errorRate: 0.001 })
 * await ids.addMany(['u1', 'u2']) // [true, true]
 * await ids.has('u3')             // false
 */
export class RedisBloomFilter extends BloomFilter<false> {
  /** A fixed filter (a counting one is a `Counting…Filter`, a layered one a `Layered…Filter`). */
  declare readonly kind: 'fixed'
  /** The filter's name: its keys are `<name>:meta` and `<name>:<shard>:{<tag>}`. */
  readonly name: string
  private readonly shards: ShardGenerations
  private readonly redisStore: RedisBitStore
  /** The replica answering `has` when opened with `replica` (docs/SPEC.md 9.13). */
  private replicaOf: Replica | undefined

  private constructor(shards: ShardGenerations, settings: RedisSettings, hasher: Awaited<ReturnType<typeof createKeyHasher>>) {
    const store = new RedisBitStore(shards, settings.store)
    super(store, hasher)
    this.shards = shards
    this.redisStore = store
    this.name = shards.names.name
    stores.set(this, store)
  }

  /** The filter over its shards, with the options its public method checked into `settings`. */
  private static async over(shards: ShardGenerations, settings: RedisSettings): Promise<RedisBloomFilter> {
    const filter = new RedisBloomFilter(shards, settings, await createKeyHasher(shards.parameters.seed))
    const replica = await startReplica(shards, filter.redisStore, filter.hasher, settings.replica)
    if (replica !== undefined) {
      filter.replicaOf = replica
      filter.redisStore.onClose(() => replica.close())
    }
    return filter
  }

  /**
   * Creates the filter `name` sized for `capacity` keys at `errorRate`, or opens it if a filter
   * with exactly these parameters already exists (so every instance of a service may call it at
   * start-up; racing creators end with one filter). Shards default to as many as keep each at
   * most 4 MiB ({@link DEFAULT_SHARD_BITS}); pass `shards` to spread a small filter over the
   * masters of a Cluster. No command allocates more than 4 MiB. With `growth` or `window`, a
   * {@link LayeredRedisFilter} that grows or forgets.
   *
   * @param redis A connected ioredis `Redis` or `Cluster` with your options (auth, TLS, timeouts).
   * @throws BloomError `BLOOM_INVALID_PARAMETER` (name, capacity, errorRate, shards, seed, ttl, …),
   *   `BLOOM_INCOMPATIBLE` if `name` holds a filter with other parameters, `BLOOM_LOCKED` if
   *   another process is still creating it after `lockWait`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static create(redis: RedisClient, name: string, options: RedisCreateOptions & { readonly counting: true }): Promise<RedisCountingFilter>
  static create(redis: RedisClient, name: string, options: LayeredRedisOptions): Promise<LayeredRedisFilter>
  static create(redis: RedisClient, name: string, options: RedisCreateOptions): Promise<RedisBloomFilter>
  static async create(
    redis: RedisClient,
    name: string,
    options: RedisCreateOptions | LayeredRedisOptions | (RedisCreateOptions & { readonly counting: true }),
  ): Promise<RedisBloomFilter | LayeredRedisFilter | RedisCountingFilter> {
    const settings = checkRedisOptions('RedisBloomFilter.create', options)
    // With `counting: true`, a counting filter (counting/redis-counting-filter.ts), which refuses `growth` and
    // `window`. (`counting` is a boolean by now: checkRedisOptions refused 1, 'yes' and null.)
    if ((options as { counting?: boolean }).counting === true) {
      return RedisCountingFilter.createWith(redis, name, options as RedisCreateOptions, settings)
    }
    // With `growth` or `window`, a layered filter (layered/layered-redis-filter.ts).
    if (isLayeredOptions(options)) return LayeredRedisFilter.createWith(redis, name, options, settings)
    // Without a seed, a random one (keyed hashing); a filter already under the name is opened with its own.
    // A filter an earlier release sized for the same options is adopted as it is (earlierSizeFilter).
    optionChecks.checkCreateKind(options, 'fixed')
    const { parameters, seeded, earlier } = newFilterParameters(options, (o) => sizeRedisFilter(o), (o) => sizeRedisFilter(o, 0, earlierSizeFilter))
    return RedisBloomFilter.over(await createOrOpenShardFilter({ redis, name, parameters, settings, seeded, earlier, counterBits: 0 }), settings)
  }

  /**
   * Like {@link create}, with explicit parameters (e.g. those of a filter you will merge with).
   * @throws as {@link create}.
   */
  static async fromParameters(redis: RedisClient, name: string, parameters: FilterParametersInput, options: RedisNewFilterOptions = {}): Promise<RedisBloomFilter> {
    checkOptionNames('RedisBloomFilter.fromParameters', parameters, ['parameters'])
    const settings = checkRedisOptions('RedisBloomFilter.fromParameters', options)
    return RedisBloomFilter.over(await createOrOpenShardFilter({ redis, name, parameters, settings, seeded: true, counterBits: 0 }), settings)
  }

  /**
   * Opens the filter `name`, whatever `create` or `import` made there: a fixed filter as a
   * `RedisBloomFilter`, a layered one (made with `growth` or `window`) as a {@link LayeredRedisFilter},
   * a counting one (`counting: true`) as a {@link RedisCountingFilter}.
   * Tell them apart by `filter.kind` (`'fixed'`, `'layered'` or `'counting'`), or pass `kind` to insist on one:
   * the result is then typed as that class, and a name holding the other kind is
   * `BLOOM_INCOMPATIBLE`. Its parameters come from Redis. Waits (up to `lockWait`) while another
   * process is still creating or importing a fixed filter.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_INCOMPATIBLE` (not the `kind` asked for), `BLOOM_LOCKED`, `BLOOM_CORRUPT_STORE`
   *   (not a bloomkit filter, a meta hash changed outside bloomkit, or one that disagrees with its
   *   shards), `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_DATA_LOST` (a layer listed as ready is gone),
   *   `BLOOM_STORE_UNAVAILABLE`.
   */
  static open(redis: RedisClient, name: string, options: RedisOpenOptions & { readonly kind: 'fixed' }): Promise<RedisBloomFilter>
  static open(redis: RedisClient, name: string, options: RedisOpenOptions & { readonly kind: 'layered' }): Promise<LayeredRedisFilter>
  static open(redis: RedisClient, name: string, options: RedisOpenOptions & { readonly kind: 'counting' }): Promise<RedisCountingFilter>
  static open(redis: RedisClient, name: string, options?: RedisOpenOptions): Promise<RedisBloomFilter | LayeredRedisFilter | RedisCountingFilter>
  static async open(redis: RedisClient, name: string, options: RedisOpenOptions = {}): Promise<RedisBloomFilter | LayeredRedisFilter | RedisCountingFilter> {
    const settings = checkRedisOptions('RedisBloomFilter.open', options)
    const client = checkClient(redis)
    checkName(name)
    const { timeout, lockWait } = settings
    // The meta read once, its kind decided from it (options.kind was checked by checkRedisOptions).
    const stored = await readStoredFilter(client, name, { timeout, lockWait, asked: options.kind })
    if (stored.kind === 'layered') return LayeredRedisFilter.over(client, name, stored.fields, settings, options.clock)
    if (stored.kind === 'counting') return RedisCountingFilter.fromMeta(client, name, stored.meta, settings)
    return RedisBloomFilter.over(await openShardFilter(client, name, stored.meta, { timeout }), settings)
  }

  /**
   * Loads a snapshot (from `export()`/`exportChunks()` of any backend) into the filter `name`: a
   * fixed filter's (format version 1) as a `RedisBloomFilter`, a layered one's (version 2) as a
   * {@link LayeredRedisFilter} (into a free name only), a counting one's (version 3) as a
   * {@link RedisCountingFilter}; tell them apart by `kind`, or pass `kind` to insist on one (another
   * kind is `BLOOM_INCOMPATIBLE`, and nothing is written).
   *
   * A fixed snapshot's chunks are written in steps of at most 1 MiB into the (allocated)
   * next-generation keys; only after the whole snapshot has passed its length and CRC-32 checks
   * are the shards swapped in. A bad snapshot leaves nothing behind: no filter if `name` was free,
   * the old bits if it was not. If `name` holds a filter, its parameters must match (unless `replaceParameters`) and its bits
   * are replaced (adds made while the import runs may be lost); its TTL is kept.
   *
   * @param snapshot The whole snapshot, or its chunks in order (e.g. a file read stream).
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INCOMPATIBLE`,
   *   `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static import(redis: RedisClient, name: string, snapshot: SnapshotSource, options: RedisImportOptions & { readonly kind: 'fixed' }): Promise<RedisBloomFilter>
  static import(redis: RedisClient, name: string, snapshot: SnapshotSource, options: RedisImportOptions & { readonly kind: 'layered' }): Promise<LayeredRedisFilter>
  static import(redis: RedisClient, name: string, snapshot: SnapshotSource, options: RedisImportOptions & { readonly kind: 'counting' }): Promise<RedisCountingFilter>
  static import(redis: RedisClient, name: string, snapshot: SnapshotSource, options?: RedisImportOptions): Promise<RedisBloomFilter | LayeredRedisFilter | RedisCountingFilter>
  static async import(redis: RedisClient, name: string, snapshot: SnapshotSource, options: RedisImportOptions = {}): Promise<RedisBloomFilter | LayeredRedisFilter | RedisCountingFilter> {
    const settings = checkRedisOptions('RedisBloomFilter.import', options)
    const client = checkClient(redis)
    checkName(name)
    const kind = options.kind // checked by checkRedisOptions
    const { kind: found, source } = await peekKind(snapshot, kind)
    if (found === 'layered') return LayeredRedisFilter.importWith(client, name, await wholeSnapshot(source), settings, options.clock)
    if (found === 'counting') return RedisCountingFilter.importWith(client, name, source, settings)
    return RedisBloomFilter.over(await importSnapshot(client, name, source, settings), settings)
  }

  /**
   * Deletes the filter `name` (meta, shards, any unfinished next generation) without opening it;
   * a layered one as `LayeredRedisFilter.destroy` does (every layer, then its meta). A damaged meta
   * (`BLOOM_CORRUPT_STORE` to open) is destroyed all the same: the shard keys a SCAN finds on every
   * master (its shard count is not trusted). Resolves to false if there was no
   * filter of that name.
   * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` (a filter of a later store format: destroy it with that release), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async destroy(redis: RedisClient, name: string, options: RedisFilterOptions = {}): Promise<boolean> {
    const { timeout } = checkRedisOptions('RedisBloomFilter.destroy', options)
    const client = checkClient(redis)
    checkName(name)
    return destroyFilter(client, name, timeout)
  }

  /**
   * What the replica holds (shards loaded, entries applied, staleness) when the filter was opened
   * with `replica`; undefined otherwise.
   */
  get replica(): ReplicaStatus | undefined {
    return this.replicaOf?.status()
  }

  // With a replica, checks and adds go through it; without, through the store (core's defaults).
  protected override _hasHashed(a: number, b: number): Promise<boolean> {
    return this.replicaOf === undefined ? super._hasHashed(a, b) : this.replicaOf.has(a, b)
  }

  protected override _hasMany(keys: Iterable<BloomKey>): Promise<boolean[]> {
    return this.replicaOf === undefined ? super._hasMany(keys) : this.replicaOf.hasMany(keys)
  }

  protected override _addHashed(a: number, b: number): Promise<boolean> {
    return this.replicaOf === undefined ? super._addHashed(a, b) : this.replicaOf.add(a, b)
  }

  protected override _addMany(keys: Iterable<BloomKey>): Promise<boolean[]> {
    return this.replicaOf === undefined ? super._addMany(keys) : this.replicaOf.addMany(keys)
  }

  /** The Redis keys that hold the filter: its meta hash, then each shard's key in shard order (for monitoring and backups). */
  get keys(): string[] {
    const { names, parameters } = this.shards
    return [names.meta, ...Array.from({ length: parameters.shards }, (_, shard) => names.shard(shard))]
  }

  /**
   * For a filter with a feed (store format 2, docs/SPEC.md 9.12): the entries each shard's feed
   * keeps at least. Undefined for a filter without one.
   */
  get feedLength(): number | undefined {
    return this.shards.feedLength > 0 ? this.shards.feedLength : undefined
  }

  /** The random number (1 to 2^31 − 1) marking this filter's shard keys; a filter re-created under the same name gets another. */
  get epoch(): number {
    return this.shards.epoch
  }

  /**
   * Deletes the filter from Redis (meta first, so nobody opens it any more, then every shard key)
   * and closes this instance. Other instances' calls then fail with `BLOOM_DATA_LOST`.
   */
  async destroy(): Promise<void> {
    this.checkOpen()
    await this.shards.deleteAll()
    await this.close()
  }

  /**
   * Sets (seconds, 1 to 2^31 − 1) or removes (`null`) the TTL of the whole filter: meta and every
   * shard. A rebuild or import keeps the remaining TTL.
   */
  async setTtl(seconds: number | null): Promise<void> {
    this.checkOpen()
    await expireShardFilter(this.shards, seconds === null ? 0 : checkInteger('seconds', seconds, 1, 2 ** 31 - 1) * 1000)
  }

  /** Seconds until the filter expires (fractional), or `null` if it has no TTL. */
  async ttl(): Promise<number | null> {
    this.checkOpen()
    const ms = Number(await this.shards.call(this.shards.client.pttl(this.shards.names.meta), `ttl "${this.name}"`))
    if (ms === -2) throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    return ms < 0 ? null : ms / 1000
  }

  /**
   * Replaces the filter's contents by exactly `keys` (plus keys added while it runs): the standard
   * way to remove keys from a Bloom filter, and to recover from `BLOOM_DATA_LOST`.
   *
   * The new bits are built in each shard's next-generation key while readers keep using the old
   * ones; every `add` from any process meanwhile goes to both (the live shards' markers are
   * flagged first). Then each shard is swapped in with one atomic RENAME, so a reader sees a whole
   * old shard or a whole new one: a key in both the old and the new set is never reported absent.
   * `keys` is read after the flagging, so a source listed from then on includes every key added
   * before `rebuild` was called. One rebuild, import or clear at a time per filter.
   * A filter of at most 256 MiB in shards of at most 4 MiB (the default) is built in local memory
   * and each shard then ORed into its next generation whole, at about the speed of an import;
   * larger ones send a BITFIELD operation per bit.
   *
   * @throws BloomError `BLOOM_LOCKED` (another one runs; see `force`), `BLOOM_NOT_FOUND`,
   *   `BLOOM_INVALID_KEY`, `BLOOM_STORE_UNAVAILABLE`. On failure the old bits stay.
   */
  async rebuild(keys: AsyncIterable<BloomKey> | Iterable<BloomKey>, options: RebuildOptions = {}): Promise<void> {
    const { force } = checkRebuildOptions(options)
    this.checkOpen()
    await rebuild({ shards: this.shards, store: this.redisStore, keys, force, locate: (key, batch, index) => this.locate(key, batch, index), checkOpen: () => this.checkOpen() })
  }

  /**
   * Unsets every bit: each shard is rebuilt empty as its next generation (1 MiB steps) and swapped
   * in with one RENAME. Holds the filter's lock like a rebuild.
   * @throws BloomError `BLOOM_LOCKED` while a rebuild or import runs, `BLOOM_STORE_UNAVAILABLE`.
   */
  protected override async _clear(): Promise<void> {
    const token = await lockMeta(this.shards, 'clearing')
    try {
      await this.redisStore.clear()
    } catch (error) {
      await abandon(this.shards, token)
      throw error
    }
    await unlockMeta(this.shards, token, `clear "${this.name}"`)
  }

  /** The meta hash as stored now (state, generation, parameters). */
  async info(): Promise<FilterMeta> {
    this.checkOpen()
    const meta = await readMeta(this.shards.client, this.name, this.shards.timeout)
    if (meta === undefined) throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    return meta
  }
}
