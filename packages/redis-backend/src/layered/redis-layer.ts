// One layer of a layered filter in Redis (docs/SPEC.md 9.8): the fixed filter `<name>:L<id>` as the
// shard layout stores it (a meta, its shards, a bit store over them and, when the layered filter
// was opened with `replica`, a replica of them), not a public `RedisBloomFilter`, as RedisBloom's
// `SBLink` holds a bare `struct bloom` and LevelDB's layers are built from `LevelBitStore`. The
// layered filter checked its options once; opening a layer does every store check (the meta read
// once settled, decoded and checked, the shards verified against it), none of the public ones.
import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkInteger, createKeyHasher, type LayerEntry, type StoredLayer } from '@bloomkit/core/store'
import { RedisBitStore } from '../bits/redis-bit-store.js'
import { layerName } from '../layout/key-names.js'
import { createShardFilter, openFixedShards } from '../layout/shard-filter.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { checkRedisParameters, type StoreSettings } from '../options.js'
import type { Replica } from '../replica/replica.js'
import type { ReplicaSettings } from '../replica/replica-options.js'
import { startReplica } from '../replica/start-replica.js'
import type { RedisClient } from '../wire/client.js'

/** What every layer of one layered filter is opened or created with, resolved once by its storage. */
export interface LayerSettings {
  readonly client: RedisClient
  /** The layered filter's name: a layer's filter is `<name>:L<id>`. */
  readonly name: string
  /** Each command's bound, in ms. */
  readonly timeout: number
  /** How long to wait (ms) while another process still creates a layer's filter. */
  readonly lockWait: number
  /** The settings of each layer's bit store (the layered filter's). */
  readonly store: StoreSettings
  /** The layered meta's `feedLength`: every layer is created with feeds of it (docs/SPEC.md 9.12); 0 for none. */
  readonly feedLength: number
  /** The `replica` option, when the layered filter was opened with one: each layer gets a replica of its own. */
  readonly replica?: ReplicaSettings
}

/** A listed layer as this process holds it: core's stored layer over the shards of `<name>:L<id>`. */
export class RedisLayer implements StoredLayer<false> {
  count = 0
  /** Its filter's meta key, then its shard keys in shard order (what the layered check script reads). */
  readonly keys: readonly string[]
  private closed = false

  constructor(
    readonly entry: LayerEntry,
    /** Its filter's keys, parameters, epoch and feed. */
    readonly shards: ShardGenerations,
    readonly store: RedisBitStore,
    private readonly replicaOf: Replica | undefined,
  ) {
    const { names, parameters } = shards
    this.keys = [names.meta, ...Array.from({ length: parameters.shards }, (_, shard) => names.shard(shard))]
  }

  /** Its filter's name, `<name>:L<id>`. */
  get name(): string {
    return this.shards.names.name
  }

  /**
   * Its replica (the layered filter was opened with `replica`).
   * @throws BloomError `BLOOM_CLOSED` once closed (released on reading a list without it), `BLOOM_INCOMPATIBLE` without a replica.
   */
  replica(): Replica {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', `layer ${this.name} is closed`)
    if (this.replicaOf === undefined) throw new BloomError('BLOOM_INCOMPATIBLE', `layer ${this.name} has no replica`)
    return this.replicaOf
  }

  /** Closes its store (and with it its replica); later calls on it fail with `BLOOM_CLOSED`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.store.close()
  }
}

/**
 * Opens the filter of a layer listed as ready.
 * @throws BloomError `BLOOM_NOT_FOUND` (its meta is gone: the caller decides whether that is data
 *   lost), and as {@link openFixedShards} and a replica's load do.
 */
export async function openLayer(settings: LayerSettings, entry: LayerEntry): Promise<RedisLayer> {
  const { client, timeout, lockWait } = settings
  const shards = await openFixedShards(client, layerName(settings.name, entry.id), { timeout, lockWait })
  return layerOver(settings, entry, shards)
}

/**
 * Creates the filter of a listed layer with `parameters` (TTL `ttlSeconds`, if any), or opens it
 * when another writer created it first, sized its own way (docs/SPEC.md 9.8, step 4): its
 * parameters are then those its meta holds.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` (parameters or TTL a Redis filter cannot have), as
 *   {@link openFixedShards} does, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function createLayer(settings: LayerSettings, entry: LayerEntry, parameters: FilterParameters, { ttlSeconds }: { readonly ttlSeconds: number | undefined }): Promise<RedisLayer> {
  const { client, timeout, lockWait, feedLength } = settings
  const name = layerName(settings.name, entry.id)
  // The bounds a filter's `ttl` option has, so that a layer gets no TTL Redis would refuse.
  const ttlMs = ttlSeconds === undefined ? 0 : checkInteger('ttl', ttlSeconds, 1, 2 ** 31 - 1) * 1000
  const spec = { client, name, parameters: checkRedisParameters(parameters), timeout, ttlMs, seeded: true, feedLength }
  const created = await createShardFilter(spec).catch((error: unknown) => {
    if (error instanceof BloomError && error.code === 'BLOOM_INCOMPATIBLE') return undefined
    throw error
  })
  return layerOver(settings, entry, created ?? (await openFixedShards(client, name, { timeout, lockWait })))
}

/** A layer over its filter's shards: a bit store, and a replica when the layered filter was opened with one. */
async function layerOver(settings: LayerSettings, entry: LayerEntry, shards: ShardGenerations): Promise<RedisLayer> {
  const store = new RedisBitStore(shards, settings.store)
  if (settings.replica === undefined) return new RedisLayer(entry, shards, store, undefined)
  try {
    const replica = await startReplica(shards, store, await createKeyHasher(shards.parameters.seed), settings.replica)
    if (replica !== undefined) store.onClose(() => replica.close())
    return new RedisLayer(entry, shards, store, replica)
  } catch (error) {
    await store.close()
    throw error
  }
}
