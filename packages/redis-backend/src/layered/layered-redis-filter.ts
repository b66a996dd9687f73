import { BloomError, LayeredFilter, type BloomKey, type LayeredOptions, type RotatingOptions } from '@bloomkit/core'
import { checkInteger, createKeyHasher, layeredBatch, layeredFormat, optionChecks, type LayerPolicy, layerPolicies } from '@bloomkit/core/store'
import { callRedis } from '../errors.js'
import { runScript } from '../wire/script.js'
import { checkName, layerName, metaKey } from '../layout/key-names.js'
import { checkLayeredKind, CREATE_LAYERED, entryText, policyFields, policyOf, verifyLayeredCheck, withLayeredCheck } from './layered-meta.js'
import { metaFields } from '../layout/meta.js'
import { notFound } from '../layout/meta-lock.js'
import { expireShardFilter } from '../layout/shard-filter.js'
import { checkClient, type RedisClient } from '../wire/client.js'
import { checkRedisOptions, DEFAULT_SHARD_BITS, type RedisFeedOptions, type RedisFilterOptions, type RedisSettings } from '../options.js'
import { destroyLayeredFilter } from '../operations/destroy.js'
import { importSnapshot } from '../operations/import.js'
import { RedisLayers } from './redis-layers.js'
import type { RedisLayer } from './redis-layer.js'

const { layerParameters, layerPolicyOf } = layerPolicies

const { decodeLayeredSnapshot, layerSnapshotOf, snapshotLayerEntries } = layeredFormat
const { hashPairs, keyBatches, layerBatch } = layeredBatch

/** Keys hashed per round trip by addMany/hasMany. */
const BATCH_KEYS = 4096

/** Options of {@link LayeredRedisFilter.create}: a scalable (`growth`) or rotating (`window`) policy and the store options. */
export type LayeredRedisOptions = LayeredOptions & RedisFilterOptions & RedisFeedOptions

/** Options of {@link LayeredRedisFilter.open} and {@link LayeredRedisFilter.import}: the store options, and the clock of a rotating filter. */
export type LayeredRedisOpenOptions = RedisFilterOptions & { readonly clock?: () => number }

/**
 * A layered Bloom filter in Redis: core's {@link LayeredFilter} over {@link RedisLayers}. Its
 * layers are ordinary bloomkit filters named `<name>:L<id>`, listed (with each layer's count of
 * new keys) in the meta hash `<name>:meta`, so every process sees the same layers and the same
 * growth (docs/SPEC.md 9.8). Every method returns a Promise.
 *
 * - **Scalable** (`growth`): when the newest layer has taken its capacity, one process adds the
 *   next layer; racing growers agree through one compare-and-set script, and adds reserve room in
 *   a layer's count before writing, so racing processes never put more than its capacity into it.
 * - **Rotating** (`window`): each window's layers expire by TTL `keep` windows after it (plus a
 *   minute), so an idle filter cleans itself; checks skip windows that have passed.
 *
 * `has`/`hasMany` ask every layer in one script on a standalone server (all at once on a Cluster),
 * with a read of the list's version, so that a layer another process just added is checked too.
 */
export class LayeredRedisFilter extends LayeredFilter<false> {
  /** The filter's name: its keys are `<name>:meta` and those of the layers `<name>:L<id>`. */
  readonly name: string
  private readonly redis: RedisLayers

  private constructor(storage: RedisLayers, hasher: Awaited<ReturnType<typeof createKeyHasher>>, clock: (() => number) | undefined) {
    super(storage.policy, storage, hasher, { clock, batchKeys: BATCH_KEYS, maxShardBits: DEFAULT_SHARD_BITS })
    this.redis = storage
    this.name = storage.name
  }

  /**
   * Creates the layered filter `name`, or opens it if one with the same policy exists (racing
   * creators end with one). Prefer `RedisBloomFilter.create`, which returns one when the options
   * have `growth` or `window`.
   * @throws BloomError `BLOOM_INVALID_PARAMETER`, `BLOOM_INCOMPATIBLE` (`name` holds another filter
   *   or another policy), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(redis: RedisClient, name: string, options: LayeredRedisOptions): Promise<LayeredRedisFilter> {
    return LayeredRedisFilter.createWith(redis, name, options, checkRedisOptions('LayeredRedisFilter.create', options))
  }

  /** @internal {@link create} with its options checked once, into `settings` (also `RedisBloomFilter.create`'s way in). */
  static async createWith(redis: RedisClient, name: string, options: LayeredRedisOptions, settings: RedisSettings): Promise<LayeredRedisFilter> {
    optionChecks.checkCreateKind(options, 'layered')
    const client = checkClient(redis)
    checkName(name)
    const policy = layerPolicyOf(options)
    const { feedLength } = settings
    await runScript(client, CREATE_LAYERED, [1, metaKey(name), ...withLayeredCheck([...policyFields(policy, feedLength), 'layers', '', 'version', '1', 'nextId', '0'])], settings.timeout, `create "${name}"`)
    const filter = await LayeredRedisFilter.openWith(client, name, settings, clockOf(options))
    // A feed asked for must be there (as for a fixed filter); one there is fine without asking.
    if (feedLength > 0 && filter.redis.feedLength === 0) {
      await filter.close()
      throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" exists without feeds (store format 1); feed: true was asked for. Create the filter with feeds under another name`)
    }
    // Without a seed of the caller's, the stored filter keeps its own (racing creators end with one seed).
    const comparable = (p: LayerPolicy) => JSON.stringify(options.seed === undefined ? { ...p, seed: 0 } : p)
    if (comparable(filter.policy) !== comparable(policy)) {
      await filter.close()
      throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" exists with another policy: stored ${JSON.stringify(filter.policy)}, requested ${JSON.stringify(policy)}`)
    }
    return filter
  }

  /**
   * Opens the layered filter `name`: its policy and layers come from Redis.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_INCOMPATIBLE` (a fixed filter), `BLOOM_CORRUPT_STORE`,
   *   `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_DATA_LOST` (a listed layer is gone), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(redis: RedisClient, name: string, options: LayeredRedisOpenOptions = {}): Promise<LayeredRedisFilter> {
    const settings = checkRedisOptions('LayeredRedisFilter.open', options)
    const client = checkClient(redis)
    checkName(name)
    return LayeredRedisFilter.openWith(client, name, settings, clockOf(options))
  }

  /** {@link open} with its options checked: the meta read once, then {@link over}. */
  private static async openWith(client: RedisClient, name: string, settings: RedisSettings, clock: (() => number) | undefined): Promise<LayeredRedisFilter> {
    const fields = metaFields(await callRedis(client.hgetall(metaKey(name)), settings.timeout, `open "${name}"`))
    if (Object.keys(fields).length === 0) throw notFound(name)
    return LayeredRedisFilter.over(client, name, fields, settings, clock)
  }

  /** @internal The filter over a layered meta hash's `fields`, already read (the front door reads them once), with the options checked into `settings`. */
  static async over(client: RedisClient, name: string, fields: Record<string, string>, settings: RedisSettings, clock: (() => number) | undefined): Promise<LayeredRedisFilter> {
    // docs/SPEC.md 9.8's open steps: the kind and format, then the check, then what the checked fields say.
    checkLayeredKind(name, fields)
    verifyLayeredCheck(name, fields)
    const policy = policyOf(name, fields)
    const storage = new RedisLayers(client, name, policy, settings, clock ?? Date.now, fields)
    await storage.refresh()
    return new LayeredRedisFilter(storage, await createKeyHasher(policy.seed), clock)
  }

  /**
   * Loads a layered snapshot (format version 2) into `name`, which must be free: each layer is
   * imported as an ordinary filter (checked before it is used), then listed.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INCOMPATIBLE`
   *   (`name` is taken), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async import(redis: RedisClient, name: string, snapshot: Uint8Array, options: LayeredRedisOpenOptions & RedisFeedOptions = {}): Promise<LayeredRedisFilter> {
    const settings = checkRedisOptions('LayeredRedisFilter.import', options)
    const client = checkClient(redis)
    checkName(name)
    return LayeredRedisFilter.importWith(client, name, snapshot, settings, clockOf(options))
  }

  /** @internal {@link import} with the client and name checked and the options checked into `settings` (also `RedisBloomFilter.import`'s way in). */
  static async importWith(client: RedisClient, name: string, snapshot: Uint8Array, settings: RedisSettings, clock: (() => number) | undefined): Promise<LayeredRedisFilter> {
    const { policy, layers } = decodeLayeredSnapshot(snapshot)
    const { timeout, feedLength } = settings
    const entries = snapshotLayerEntries(policy, layers)
    const taken = await callRedis(client.exists(metaKey(name)), timeout, `import "${name}"`)
    if (Number(taken) === 1) throw new BloomError('BLOOM_INCOMPATIBLE', `import: "${name}" already holds a filter; destroy it first or pick another name`)
    // With feed: true (or replica, which implies it), every layer gets a feed and the meta format 2 (docs/SPEC.md 9.12).
    for (const [i, layer] of layers.entries()) {
      await importSnapshot(client, layerName(name, entries[i].id), layerSnapshotOf(snapshot, layer), { ...settings, replica: undefined, ttlMs: 0 })
    }
    const counts = entries.flatMap((entry, i) => [`count:${entry.id}`, String(layers[i].count), `ready:${entry.id}`, '1'])
    await callRedis(
      client.hset(metaKey(name), ...withLayeredCheck([...policyFields(policy, feedLength), 'layers', entries.map(entryText).join(','), 'version', '1', 'nextId', String(layers.length)]), ...counts),
      timeout,
      `import "${name}"`,
    )
    return LayeredRedisFilter.openWith(client, name, settings, clock)
  }

  /**
   * Deletes the layered filter `name`: every layer its meta names (listed, or dropped but maybe not
   * yet expired), then the meta, unless a layer was listed meanwhile (then those too). A damaged
   * meta (its list unreadable, its check failed) is destroyed all the same. Resolves to false if
   * there was none. A layer that cannot be destroyed fails the call with its code, and the meta
   * stays, so that destroying again finds what is left.
   * @throws BloomError `BLOOM_INCOMPATIBLE` (`name` is not a layered filter), a layer's error, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async destroy(redis: RedisClient, name: string, options: RedisFilterOptions = {}): Promise<boolean> {
    const { timeout } = checkRedisOptions('LayeredRedisFilter.destroy', options)
    const client = checkClient(redis)
    checkName(name)
    return LayeredRedisFilter.destroyWith(client, name, timeout)
  }

  /** {@link destroy} with its client, name and options checked. */
  private static async destroyWith(client: RedisClient, name: string, timeout: number): Promise<boolean> {
    const fields = metaFields(await callRedis(client.hgetall(metaKey(name)), timeout, `destroy "${name}"`))
    if (Object.keys(fields).length === 0) return false
    return destroyLayeredFilter(client, name, fields, timeout)
  }

  /**
   * Replaces the contents by exactly `keys`, in one layer sized for them (at least the first
   * capacity, at layer 0's error rate). The new layer is listed as the newest before it is filled,
   * so adds from any process meanwhile go into it and checks keep seeing the old layers; only then
   * are the layers before it dropped (docs/SPEC.md 9.8, Rebuild). Scalable filters only.
   */
  async rebuild(keys: Iterable<BloomKey> | AsyncIterable<BloomKey>): Promise<void> {
    this.checkOpen()
    if (this.policy.kind === 'rotating') throw new BloomError('BLOOM_INCOMPATIBLE', 'rebuild: a rotating filter forgets by itself; rebuild applies to scalable filters')
    const all: BloomKey[] = []
    for await (const key of keys as AsyncIterable<BloomKey>) all.push(key)
    const capacity = Math.max(this.policy.capacity, new Set(all.map((k) => (typeof k === 'string' ? `s${k}` : `b${Buffer.from(k).toString('hex')}`))).size)
    const storage = this.redis
    let layer: RedisLayer | undefined
    while (layer === undefined) {
      await storage.refresh()
      layer = await storage.append({ window: 0, index: 0, capacity }, layerParameters(this.policy, 0, capacity, DEFAULT_SHARD_BITS))
    }
    // Its count: the keys new to it, judged against it alone (the layers before it are about to go).
    for (const batch of keyBatches(all, BATCH_KEYS)) {
      const out = new Uint8Array(batch.length)
      await layer.store.setBits(layerBatch(layer.store.parameters, hashPairs(this.hasher, batch)), out)
      await storage.settle(layer, 0, out.reduce((a, b) => a + b, 0))
    }
    await storage.refresh()
    const id = layer.entry.id
    const at = storage.layers.findIndex((l) => l.entry.id === id)
    await storage.drop(storage.layers.slice(0, at), 'cleared')
  }

  /** Sets (seconds) or removes (`null`) the TTL of the whole filter: meta and every layer. Scalable filters only (a rotating one expires its layers itself). */
  async setTtl(seconds: number | null): Promise<void> {
    this.checkOpen()
    if (this.policy.kind === 'rotating') throw new BloomError('BLOOM_INCOMPATIBLE', 'setTtl: a rotating filter’s layers expire by their windows')
    // Checked before anything is written: a refused value leaves the meta's TTL as it was.
    const ms = seconds === null ? 0 : checkInteger('seconds', seconds, 1, 2 ** 31 - 1) * 1000
    const storage = this.redis
    await storage.refresh()
    const meta = metaKey(this.name)
    await storage.call(seconds === null ? storage.client.persist(meta) : storage.client.expire(meta, seconds), 'setTtl')
    for (const layer of storage.layers) await expireShardFilter(layer.shards, ms)
  }

  /** Seconds until the filter's meta expires (fractional), or `null` if it has no TTL. */
  async ttl(): Promise<number | null> {
    this.checkOpen()
    const ms = Number(await this.redis.call(this.redis.client.pttl(metaKey(this.name)), 'ttl'))
    if (ms === -2) throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    return ms < 0 ? null : ms / 1000
  }

  /** Deletes the filter from Redis (meta, then every layer) and closes this instance. */
  async destroy(): Promise<void> {
    this.checkOpen()
    await LayeredRedisFilter.destroyWith(this.redis.client, this.name, this.redis.settings.timeout)
    await this.close()
  }
}

/**
 * @deprecated Renamed {@link LayeredRedisFilter}, after the rule `Layered<Backend>Filter`
 * (`LayeredMemoryFilter`, `LayeredLevelFilter`); this alias goes in the next major release.
 */
export const RedisLayeredFilter = LayeredRedisFilter
/** @deprecated Renamed {@link LayeredRedisFilter}. */
export type RedisLayeredFilter = LayeredRedisFilter
/** @deprecated Renamed {@link LayeredRedisOptions}. */
export type RedisLayeredOptions = LayeredRedisOptions

/** The clock of a rotating filter's options (core checks it), if any. */
function clockOf(options: LayeredRedisOptions | LayeredRedisOpenOptions): (() => number) | undefined {
  return (options as RotatingOptions).clock
}
