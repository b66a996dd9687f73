import { BloomError, CountingBloomFilter, type FilterParametersInput } from '@bloomkit/core'
import { checkOptionNames, createKeyHasher, earlierSizeFilter, newFilterParameters, optionChecks, type KeyHasher } from '@bloomkit/core/store'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { createOrOpenShardFilter, openShardFilter } from '../layout/shard-filter.js'
import { importSnapshot, type SnapshotSource } from '../operations/import.js'
import { checkName } from '../layout/key-names.js'
import { readMeta, readSettledMeta } from '../layout/meta-lock.js'
import type { FilterMeta } from '../layout/meta.js'
import { checkClient, type RedisClient } from '../wire/client.js'
import { checkRedisOptions, refuseFeed, sizeRedisFilter, type RedisCreateOptions, type RedisFilterOptions, type RedisReplaceOptions, type RedisNewFilterOptions, type RedisSettings } from '../options.js'
import { RedisCounterStore } from './redis-counter-store.js'

/** Bits per counter in Redis: `BITFIELD … u4`. */
const COUNTER_BITS = 4

/**
 * A counting Bloom filter in Redis (standalone or Cluster, no modules): `remove`/`removeMany`
 * beside `add`/`has`/`addMany`/`hasMany`, shared by every process that opens the name. A 4-bit
 * counter per position, so each shard string is 4× a plain filter's; each batch is one Lua script
 * per shard key, atomic on its node, so concurrent writers never half-apply a key.
 *
 * `remove` is for keys you added: removing a key that reads absent changes nothing and resolves
 * to false, but removing a never-added key that reads present (a false positive) decrements
 * counters of keys that were added. A counter that reaches 15 stays at 15.
 *
 * @example
 * const sessions = await RedisBloomFilter.create(redis, 'sessions', { capacity: 100_000, errorRate: 0.01, counting: true })
 * await sessions.add('s:1')
 * await sessions.remove('s:1') // true
 */
export class RedisCountingFilter extends CountingBloomFilter<false> {
  /** The filter's name: its keys are `<name>:meta` and `<name>:<shard>:{<tag>}`. */
  readonly name: string
  private readonly shards: ShardGenerations

  private constructor(shards: ShardGenerations, hasher: KeyHasher) {
    super(new RedisCounterStore(shards), hasher)
    this.shards = shards
    this.name = shards.names.name
  }

  private static async over(shards: ShardGenerations): Promise<RedisCountingFilter> {
    return new RedisCountingFilter(shards, await createKeyHasher(shards.parameters.seed))
  }

  /**
   * Creates the counting filter `name` sized for `capacity` keys at `errorRate` (the plain
   * filter's sizing and layout; without `shards`, as many as keep each shard string at most
   * 4 MiB), or opens it if a counting filter with these parameters exists. Also reached by
   * `RedisBloomFilter.create(redis, name, { …, counting: true })`.
   * @throws BloomError `BLOOM_INVALID_PARAMETER`, `BLOOM_INCOMPATIBLE` (the name holds a plain
   *   filter, or other parameters), `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(redis: RedisClient, name: string, options: RedisCreateOptions): Promise<RedisCountingFilter> {
    return RedisCountingFilter.createWith(redis, name, options, checkRedisOptions('RedisCountingFilter.create', options))
  }

  /** @internal {@link create} with its options checked once, into `settings` (also `RedisBloomFilter.create`'s way in). */
  static async createWith(redis: RedisClient, name: string, options: RedisCreateOptions, settings: RedisSettings): Promise<RedisCountingFilter> {
    optionChecks.checkCountingCreate(options)
    const { parameters, seeded, earlier } = newFilterParameters(
      options,
      (o) => sizeRedisFilter(o, COUNTER_BITS),
      (o) => sizeRedisFilter(o, COUNTER_BITS, earlierSizeFilter),
    )
    return RedisCountingFilter.over(await createOrOpenShardFilter({ redis, name, parameters, settings, seeded, earlier, counterBits: COUNTER_BITS }))
  }

  /** Like {@link create}, with explicit parameters. */
  static async fromParameters(redis: RedisClient, name: string, parameters: FilterParametersInput, options: RedisNewFilterOptions = {}): Promise<RedisCountingFilter> {
    checkOptionNames('RedisCountingFilter.fromParameters', parameters, ['parameters'])
    const settings = checkRedisOptions('RedisCountingFilter.fromParameters', options)
    return RedisCountingFilter.over(await createOrOpenShardFilter({ redis, name, parameters, settings, seeded: true, counterBits: COUNTER_BITS }))
  }

  /**
   * Opens the existing counting filter `name`.
   * @throws BloomError `BLOOM_INCOMPATIBLE` if it is a plain filter (open that with
   *   `RedisBloomFilter.open`), and as `RedisBloomFilter.open`.
   */
  static async open(redis: RedisClient, name: string, options: RedisFilterOptions = {}): Promise<RedisCountingFilter> {
    const settings = checkRedisOptions('RedisCountingFilter.open', options)
    const client = checkClient(redis)
    checkName(name)
    refuseFeed(settings)
    const meta = await readSettledMeta(client, name, settings.timeout, settings.lockWait)
    if (meta.counting !== true) throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" is a plain filter, not a counting one: open it with RedisBloomFilter.open`)
    return RedisCountingFilter.fromMeta(client, name, meta, settings)
  }

  /**
   * @internal The counting filter whose meta `RedisBloomFilter.open` has read and decoded (it reads
   * the meta once for every kind): its shards checked against the meta. The caller checked the
   * options into `settings`.
   */
  static async fromMeta(client: RedisClient, name: string, meta: FilterMeta, settings: RedisSettings): Promise<RedisCountingFilter> {
    refuseFeed(settings)
    return RedisCountingFilter.over(await openShardFilter(client, name, meta, { timeout: settings.timeout, counterBits: COUNTER_BITS }))
  }

  /**
   * Loads a counting snapshot (format version 3, from `export()` of any backend's counting filter)
   * into `name`, checked whole before the shards are swapped in (as `RedisBloomFilter.import`).
   * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` for a plain snapshot, and as `RedisBloomFilter.import`.
   */
  static async import(redis: RedisClient, name: string, snapshot: SnapshotSource, options: RedisReplaceOptions = {}): Promise<RedisCountingFilter> {
    const settings = checkRedisOptions('RedisCountingFilter.import', options)
    const client = checkClient(redis)
    checkName(name)
    return RedisCountingFilter.importWith(client, name, snapshot, settings)
  }

  /** @internal {@link import} with the client and name checked and the options checked into `settings` (also `RedisBloomFilter.import`'s way in). */
  static async importWith(client: RedisClient, name: string, snapshot: SnapshotSource, settings: RedisSettings): Promise<RedisCountingFilter> {
    refuseFeed(settings)
    return RedisCountingFilter.over(await importSnapshot(client, name, snapshot, settings, { counting: true }))
  }

  /** The Redis keys that hold the filter: its meta hash, then each shard's key. */
  get keys(): string[] {
    const { names, parameters } = this.shards
    return [names.meta, ...Array.from({ length: parameters.shards }, (_, shard) => names.shard(shard))]
  }

  /** Deletes the filter from Redis (meta first, then every shard) and closes this instance. */
  async destroy(): Promise<void> {
    this.checkOpen()
    await this.shards.deleteAll()
    await this.close()
  }

  /** The meta hash as stored now. */
  async info(): Promise<Awaited<ReturnType<typeof readMeta>>> {
    this.checkOpen()
    return readMeta(this.shards.client, this.name, this.shards.timeout)
  }
}
