import {
  BloomError,
  BloomFilter,
  checkParameters,
  createKeyHasher,
  formatParameters,
  PositionBatch,
  sameParameters,
  shardBitsOf,
  sizeFilter,
  SnapshotReader,
  type BloomKey,
  type FilterParameters,
  type FilterParametersInput,
  type SizingOptions,
} from '@bloomkit/core'
import { KeyLayout, checkName } from './key-layout.js'
import { decodeMeta, encodeMeta, metaFields, randomEpoch, randomToken, type FilterMeta, type FilterState } from './metadata.js'
import { forEachLimited, RedisBitStore, type RedisClient, type RedisStoreOptions } from './redis-bit-store.js'
import { checkInteger, invalidParameter, storeError, withTimeout } from './redis-errors.js'
import { CREATE_META, DROP_META, LOCK_META, UNLOCK_META } from './scripts.js'

/**
 * The largest shard by default, in bits: 4 MiB less the marker and Redis's string header, so that
 * a shard key is one 4 MiB allocation (jemalloc rounds up to size classes: 4 MiB + 1 byte takes
 * 5 MiB). Slot migration (MIGRATE) blocks both nodes for the whole key: measured here ~3 ms per
 * MiB on loopback, so 4 MiB keeps it to ~12–20 ms.
 */
export const DEFAULT_SHARD_BITS = ((4 << 20) - 16) * 8
/** A shard's bits plus its 4-byte marker must fit a Redis string (2^32 bits). */
export const MAX_REDIS_SHARD_BITS = 2 ** 32 - 32
/** Keys hashed per store call by rebuild. */
const REBUILD_BATCH = 16_384
/** Shards worked on at once by create, import, rebuild and destroy. */
const SHARD_CONCURRENCY = 16
/** How often a waiting create or open looks again at a filter another process is creating. */
const POLL_MS = 50

/** Options of {@link RedisBloomFilter.open} (and the other constructors). */
export interface RedisFilterOptions extends RedisStoreOptions {
  /**
   * Milliseconds `create`/`open` wait for a filter that another process is still creating or
   * importing before failing with `BLOOM_LOCKED`, from 0 to 2^31 − 1. Default: 60 000.
   */
  readonly lockWait?: number
}

/** Options of {@link RedisBloomFilter.create}: sizing, TTL and store tuning. */
export interface RedisCreateOptions extends SizingOptions, RedisFilterOptions {
  /**
   * Seconds until the whole filter (meta and shards) expires, from 1 to 2^31 − 1. Default: none.
   * Change it later with {@link RedisBloomFilter.setTtl}.
   */
  readonly ttl?: number
}

/** Options of {@link RedisBloomFilter.rebuild}. */
export interface RebuildOptions {
  /**
   * Take the filter's lock even if another rebuild, import or clear holds it (one that crashed).
   * Default: false, and a held lock fails with `BLOOM_LOCKED`.
   */
  readonly force?: boolean
}

function checkClient(redis: unknown): RedisClient {
  const client = redis as RedisClient
  if (client === null || typeof client !== 'object' || typeof client.sendCommand !== 'function' || typeof client.eval !== 'function') {
    throw invalidParameter('redis', 'an ioredis Redis or Cluster instance', redis)
  }
  return client
}

function checkRedisParameters(parameters: FilterParametersInput): FilterParameters {
  const checked = checkParameters(parameters)
  if (shardBitsOf(checked) > MAX_REDIS_SHARD_BITS) {
    throw invalidParameter('shards', `enough to keep each shard at most 2^32 − 32 bits (${MAX_REDIS_SHARD_BITS}) on Redis`, checked.shards)
  }
  return checked
}

function checkOptions(options: RedisFilterOptions): void {
  if (options.timeout !== undefined && options.timeout !== Infinity) checkInteger('timeout', options.timeout, 1, 2 ** 31 - 1)
  if (options.keysPerCommand !== undefined) checkInteger('keysPerCommand', options.keysPerCommand, 1, 65_536)
  if (options.scanBytesPerKey !== undefined) checkInteger('scanBytesPerKey', options.scanBytesPerKey, 0, 2 ** 31 - 1)
  if (options.lockWait !== undefined) checkInteger('lockWait', options.lockWait, 0, 2 ** 31 - 1)
}

async function* chunksOf(source: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (source instanceof Uint8Array) {
    yield source
    return
  }
  if (source === null || typeof source !== 'object' || (!(Symbol.asyncIterator in source) && !(Symbol.iterator in source))) {
    throw invalidParameter('snapshot', 'a Uint8Array or an (async) iterable of Uint8Array chunks', source)
  }
  for await (const chunk of source as AsyncIterable<Uint8Array>) {
    if (!(chunk instanceof Uint8Array)) throw invalidParameter('snapshot chunk', 'a Uint8Array', chunk)
    yield chunk
  }
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
  /** The filter's name: its keys are `<name>:meta` and `<name>:<shard>:{<tag>}`. */
  readonly name: string
  private readonly client: RedisClient
  private readonly redisStore: RedisBitStore

  private constructor(client: RedisClient, store: RedisBitStore, hasher: Awaited<ReturnType<typeof createKeyHasher>>) {
    super(store, hasher)
    this.client = client
    this.redisStore = store
    this.name = store.layout.name
  }

  /**
   * Creates the filter `name` sized for `capacity` keys at `errorRate`, or opens it if a filter
   * with exactly these parameters already exists (so every instance of a service may call it at
   * start-up; racing creators end with one filter). Shards default to as many as keep each at
   * most 4 MiB ({@link DEFAULT_SHARD_BITS}); pass `shards` to spread a small filter over the
   * masters of a Cluster. No command allocates more than 4 MiB.
   *
   * @param redis A connected ioredis `Redis` or `Cluster` with your options (auth, TLS, timeouts).
   * @throws BloomError `BLOOM_INVALID_PARAMETER` (name, capacity, errorRate, shards, seed, ttl, …),
   *   `BLOOM_INCOMPATIBLE` if `name` holds a filter with other parameters, `BLOOM_LOCKED` if
   *   another process is still creating it after `lockWait`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(redis: RedisClient, name: string, options: RedisCreateOptions): Promise<RedisBloomFilter> {
    if (options === null || typeof options !== 'object') throw invalidParameter('options', 'an object', options)
    if (options.shards !== undefined) return RedisBloomFilter.fromParameters(redis, name, sizeFilter(options), options)
    // Classic sharding grows each shard a little (to keep the error rate), so count again until they fit.
    let shards = Math.max(1, Math.ceil(sizeFilter(options).bits / DEFAULT_SHARD_BITS))
    let parameters = sizeFilter({ ...options, shards })
    while (shardBitsOf(parameters) > DEFAULT_SHARD_BITS) parameters = sizeFilter({ ...options, shards: ++shards })
    return RedisBloomFilter.fromParameters(redis, name, parameters, options)
  }

  /**
   * Like {@link create}, with explicit parameters (e.g. those of a filter you will merge with).
   * @throws as {@link create}.
   */
  static async fromParameters(
    redis: RedisClient,
    name: string,
    parameters: FilterParametersInput,
    options: RedisFilterOptions & { readonly ttl?: number } = {},
  ): Promise<RedisBloomFilter> {
    const client = checkClient(redis)
    checkName(name)
    const checked = checkRedisParameters(parameters)
    checkOptions(options)
    const ttlMs = options.ttl === undefined ? 0 : checkInteger('ttl', options.ttl, 1, 2 ** 31 - 1) * 1000
    const layout = new KeyLayout(name, checked.shards)
    const epoch = randomEpoch()
    const token = randomToken()
    const probe = new RedisBitStore(client, layout, checked, epoch, options)
    const created = (await probe.call(
      client.eval(CREATE_META, 1, layout.meta, ...encodeMeta(checked, epoch, 'creating', token)) as Promise<unknown[]>,
      `create "${name}"`,
    )) as unknown[]
    if (Number(created[0]) === 0) {
      const stored = decodeMeta(name, metaFields(created.slice(1)))
      if (!sameParameters(stored.parameters, checked)) {
        throw new BloomError(
          'BLOOM_INCOMPATIBLE',
          `filter "${name}" exists with other parameters: stored ${formatParameters(stored.parameters)}, requested ${formatParameters(checked)}`,
        )
      }
      return RedisBloomFilter.open(client, name, options)
    }
    try {
      await forEachLimited(checked.shards, SHARD_CONCURRENCY, async (shard) => {
        await probe.allocateNext(shard)
        await probe.sealNext(shard)
        await probe.swapNext(shard, ttlMs)
      })
      if (ttlMs > 0) await probe.call(client.pexpire(layout.meta, ttlMs), `create "${name}"`)
      await probe.call(client.eval(UNLOCK_META, 1, layout.meta, token, '0'), `create "${name}"`)
    } catch (error) {
      await RedisBloomFilter.abandon(probe, token, true)
      throw error
    }
    return new RedisBloomFilter(client, probe, await createKeyHasher(checked.seed))
  }

  /**
   * Opens the existing filter `name`; its parameters come from Redis. Waits (up to `lockWait`)
   * while another process is still creating or importing it.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_LOCKED`, `BLOOM_CORRUPT_STORE` (not a bloomkit
   *   filter), `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(redis: RedisClient, name: string, options: RedisFilterOptions = {}): Promise<RedisBloomFilter> {
    const client = checkClient(redis)
    checkName(name)
    checkOptions(options)
    const meta = await RedisBloomFilter.readSettledMeta(client, name, options)
    const store = new RedisBitStore(client, new KeyLayout(name, meta.parameters.shards), meta.parameters, meta.epoch, options)
    return new RedisBloomFilter(client, store, await createKeyHasher(meta.parameters.seed))
  }

  /**
   * Loads a snapshot (from `export()`/`exportChunks()` of any backend) into the filter `name`.
   * Chunks are written in steps of at most 1 MiB into the (allocated) next-generation keys; only after the
   * whole snapshot has passed its length and CRC-32 checks are the shards swapped in. A bad
   * snapshot leaves nothing behind: no filter if `name` was free, the old bits if it was not.
   * If `name` holds a filter, its parameters must match and its bits are replaced (adds made
   * while the import runs may be lost); its TTL is kept.
   *
   * @param snapshot The whole snapshot, or its chunks in order (e.g. a file read stream).
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INCOMPATIBLE`,
   *   `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async import(
    redis: RedisClient,
    name: string,
    snapshot: Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    options: RedisFilterOptions & { readonly ttl?: number } = {},
  ): Promise<RedisBloomFilter> {
    const client = checkClient(redis)
    checkName(name)
    checkOptions(options)
    const ttlMs = options.ttl === undefined ? 0 : checkInteger('ttl', options.ttl, 1, 2 ** 31 - 1) * 1000
    const reader = new SnapshotReader()
    const token = randomToken()
    let store: RedisBitStore | undefined
    let createdMeta = false
    const started = new Set<number>()
    try {
      for await (const chunk of chunksOf(snapshot)) {
        for (const piece of reader.push(chunk)) {
          store ??= await RedisBloomFilter.claimForImport(client, name, reader.parameters!, token, options, (created) => (createdMeta = created))
          if (!started.has(piece.shard)) {
            // Allocated first, so that the writes land in place: growing by SETRANGE would leave
            // Redis's greedy growth (up to 1 MiB) unused at the end of every shard.
            started.add(piece.shard)
            await store.allocateNext(piece.shard)
          }
          await store.writeNext(piece.shard, piece.offset, piece.bytes)
        }
        if (store === undefined && reader.parameters !== undefined) {
          store = await RedisBloomFilter.claimForImport(client, name, reader.parameters, token, options, (created) => (createdMeta = created))
        }
      }
      reader.finish()
      const ready = store!
      const meta = ready.layout.meta
      const metaTtl = createdMeta ? ttlMs : Math.max(0, Number(await ready.call(client.pttl(meta), `import "${name}"`)))
      await forEachLimited(ready.parameters.shards, SHARD_CONCURRENCY, async (shard) => {
        await ready.sealNext(shard)
        await ready.swapNext(shard, metaTtl)
      })
      if (createdMeta && ttlMs > 0) await ready.call(client.pexpire(meta, ttlMs), `import "${name}"`)
      await ready.call(client.eval(UNLOCK_META, 1, meta, token, createdMeta ? '0' : '1'), `import "${name}"`)
      return new RedisBloomFilter(client, ready, await createKeyHasher(ready.parameters.seed))
    } catch (error) {
      if (store !== undefined) await RedisBloomFilter.abandon(store, token, createdMeta)
      throw error
    }
  }

  /**
   * Deletes the filter `name` (meta, shards, any unfinished next generation) without opening it.
   * Resolves to false if there was no filter of that name.
   */
  static async destroy(redis: RedisClient, name: string, options: RedisFilterOptions = {}): Promise<boolean> {
    const client = checkClient(redis)
    checkName(name)
    checkOptions(options)
    const meta = await RedisBloomFilter.readMeta(client, name, options)
    if (meta === undefined) return false
    const store = new RedisBitStore(client, new KeyLayout(name, meta.parameters.shards), meta.parameters, meta.epoch, options)
    await RedisBloomFilter.deleteKeys(store)
    return true
  }

  /** The store doing this filter's I/O (for the conformance suite and advanced use). */
  get bitStore(): RedisBitStore {
    return this.redisStore
  }

  /** The random number (1 to 2^31 − 1) marking this filter's shard keys; a filter re-created under the same name gets another. */
  get epoch(): number {
    return this.redisStore.epoch
  }

  /**
   * Deletes the filter from Redis (meta first, so nobody opens it any more, then every shard key)
   * and closes this instance. Other instances' calls then fail with `BLOOM_DATA_LOST`.
   */
  async destroy(): Promise<void> {
    this.checkOpen()
    await RedisBloomFilter.deleteKeys(this.redisStore)
    await this.close()
  }

  /**
   * Sets (seconds, 1 to 2^31 − 1) or removes (`null`) the TTL of the whole filter: meta and every
   * shard. A rebuild or import keeps the remaining TTL.
   */
  async setTtl(seconds: number | null): Promise<void> {
    this.checkOpen()
    const ms = seconds === null ? 0 : checkInteger('seconds', seconds, 1, 2 ** 31 - 1) * 1000
    const store = this.redisStore
    await store.call(ms > 0 ? this.client.pexpire(store.layout.meta, ms) : this.client.persist(store.layout.meta), `setTtl "${this.name}"`)
    await forEachLimited(this.parameters.shards, SHARD_CONCURRENCY, (shard) => store.expireLive(shard, ms))
  }

  /** Seconds until the filter expires (fractional), or `null` if it has no TTL. */
  async ttl(): Promise<number | null> {
    this.checkOpen()
    const ms = Number(await this.redisStore.call(this.client.pttl(this.redisStore.layout.meta), `ttl "${this.name}"`))
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
   *
   * @throws BloomError `BLOOM_LOCKED` (another one runs; see `force`), `BLOOM_NOT_FOUND`,
   *   `BLOOM_INVALID_KEY`, `BLOOM_STORE_UNAVAILABLE`. On failure the old bits stay.
   */
  async rebuild(keys: AsyncIterable<BloomKey> | Iterable<BloomKey>, options: RebuildOptions = {}): Promise<void> {
    this.checkOpen()
    if (keys === null || typeof keys !== 'object' || (!(Symbol.asyncIterator in keys) && !(Symbol.iterator in keys))) {
      throw invalidParameter('keys', 'an iterable or async iterable of strings or Uint8Arrays', keys)
    }
    const store = this.redisStore
    const token = await this.lock('rebuilding', options.force === true)
    const next = store.nextGeneration()
    const shards = this.parameters.shards
    try {
      await forEachLimited(shards, SHARD_CONCURRENCY, async (shard) => {
        await store.allocateNext(shard)
        await store.sealNext(shard)
      })
      await forEachLimited(shards, SHARD_CONCURRENCY, async (shard) => {
        await store.flagLive(shard, true)
      })
      let batch = new PositionBatch(REBUILD_BATCH, this.parameters.hashes)
      const out = new Uint8Array(REBUILD_BATCH)
      for await (const key of keys as AsyncIterable<BloomKey>) {
        this.checkOpen()
        this.locate(key, batch, batch.size++)
        if (batch.size === REBUILD_BATCH) {
          await next.setBits(batch, out)
          batch.size = 0
        }
      }
      if (batch.size > 0) await next.setBits(batch, out)
      const ttlMs = Math.max(0, Number(await store.call(this.client.pttl(store.layout.meta), `rebuild "${this.name}"`)))
      await forEachLimited(shards, SHARD_CONCURRENCY, (shard) => store.swapNext(shard, ttlMs))
      await store.call(this.client.eval(UNLOCK_META, 1, store.layout.meta, token, '1'), `rebuild "${this.name}"`)
    } catch (error) {
      await forEachLimited(shards, SHARD_CONCURRENCY, (shard) => store.flagLive(shard, false).then(() => undefined, () => undefined))
      await RedisBloomFilter.abandon(store, token, false)
      throw error
    }
  }

  /**
   * Unsets every bit: each shard is rebuilt empty as its next generation (1 MiB steps) and swapped
   * in with one RENAME. Holds the filter's lock like a rebuild.
   * @throws BloomError `BLOOM_LOCKED` while a rebuild or import runs, `BLOOM_STORE_UNAVAILABLE`.
   */
  override async clear(): Promise<void> {
    this.checkOpen()
    const token = await this.lock('clearing', false)
    const store = this.redisStore
    try {
      await store.clear()
    } catch (error) {
      await RedisBloomFilter.abandon(store, token, false)
      throw error
    }
    await store.call(this.client.eval(UNLOCK_META, 1, store.layout.meta, token, '0'), `clear "${this.name}"`)
  }

  /** The meta hash as stored now (state, generation, parameters). */
  async info(): Promise<FilterMeta> {
    this.checkOpen()
    const meta = await RedisBloomFilter.readMeta(this.client, this.name, { timeout: this.redisStore.timeout })
    if (meta === undefined) throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    return meta
  }

  private async lock(state: FilterState, force: boolean): Promise<string> {
    const token = randomToken()
    const store = this.redisStore
    const result = String(
      await store.call(this.client.eval(LOCK_META, 1, store.layout.meta, String(this.epoch), state, token, force ? '1' : '0'), `${state} "${this.name}"`),
    )
    if (result === 'ok') return token
    if (result === 'missing') throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    if (result === 'replaced') throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${this.name}" was destroyed and created again; open it anew`)
    throw new BloomError('BLOOM_LOCKED', `filter "${this.name}" is busy (${result}); wait, or pass { force: true } if that process died`)
  }

  private static async readMeta(client: RedisClient, name: string, options: RedisFilterOptions): Promise<FilterMeta | undefined> {
    const what = `open "${name}"`
    const raw = await withTimeout(client.hgetall(`${name}:meta`), options.timeout ?? 5000, what).catch((error: unknown) => {
      throw storeError(error, what)
    })
    const fields = metaFields(raw)
    if (Object.keys(fields).length === 0) return undefined
    return decodeMeta(name, fields)
  }

  /** Reads the meta, waiting while another process creates or imports the filter. */
  private static async readSettledMeta(client: RedisClient, name: string, options: RedisFilterOptions): Promise<FilterMeta> {
    const deadline = Date.now() + (options.lockWait ?? 60_000)
    for (;;) {
      const meta = await RedisBloomFilter.readMeta(client, name, options)
      if (meta === undefined) throw new BloomError('BLOOM_NOT_FOUND', `no filter named "${name}" in Redis`)
      if (meta.state !== 'creating' && meta.state !== 'importing') return meta
      if (Date.now() >= deadline) {
        throw new BloomError(
          'BLOOM_LOCKED',
          `filter "${name}" is still being ${meta.state === 'creating' ? 'created' : 'imported'} by another process; if it died, RedisBloomFilter.destroy() it and create it again`,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  }

  /** Creates the meta for an import (state 'importing'), or locks an existing filter with the same parameters. */
  private static async claimForImport(
    client: RedisClient,
    name: string,
    parameters: FilterParameters,
    token: string,
    options: RedisFilterOptions,
    setCreated: (created: boolean) => void,
  ): Promise<RedisBitStore> {
    const checked = checkRedisParameters(parameters)
    const layout = new KeyLayout(name, checked.shards)
    const epoch = randomEpoch()
    const probe = new RedisBitStore(client, layout, checked, epoch, options)
    const created = (await probe.call(
      client.eval(CREATE_META, 1, layout.meta, ...encodeMeta(checked, epoch, 'importing', token)) as Promise<unknown[]>,
      `import "${name}"`,
    )) as unknown[]
    if (Number(created[0]) === 1) {
      setCreated(true)
      return probe
    }
    const stored = decodeMeta(name, metaFields(created.slice(1)))
    if (!sameParameters(stored.parameters, checked)) {
      throw new BloomError(
        'BLOOM_INCOMPATIBLE',
        `filter "${name}" exists with other parameters: stored ${formatParameters(stored.parameters)}, snapshot ${formatParameters(checked)}`,
      )
    }
    const store = new RedisBitStore(client, layout, checked, stored.epoch, options)
    const result = String(await store.call(client.eval(LOCK_META, 1, layout.meta, String(stored.epoch), 'replacing', token, '0'), `import "${name}"`))
    if (result !== 'ok') throw new BloomError('BLOOM_LOCKED', `filter "${name}" is busy (${result}); try again later`)
    return store
  }

  /** Undoes an unfinished create/import/rebuild: drops next generations, then the meta or the lock. */
  private static async abandon(store: RedisBitStore, token: string, dropMeta: boolean): Promise<void> {
    try {
      await forEachLimited(store.parameters.shards, SHARD_CONCURRENCY, (shard) => store.dropNext(shard))
      if (dropMeta) {
        await forEachLimited(store.parameters.shards, SHARD_CONCURRENCY, (shard) => store.call(store.client.del(store.layout.shard(shard)), 'abandon').then(() => undefined))
        await store.call(store.client.eval(DROP_META, 1, store.layout.meta, token), 'abandon')
      } else {
        await store.call(store.client.eval(UNLOCK_META, 1, store.layout.meta, token, '0'), 'abandon')
      }
    } catch {
      // Redis is failing: the original error is the one to report. A lock left behind is
      // reported as BLOOM_LOCKED later, with the way out (force, or destroy).
    }
  }

  private static async deleteKeys(store: RedisBitStore): Promise<void> {
    const client = store.client
    await store.call(client.del(store.layout.meta), 'destroy')
    await forEachLimited(store.parameters.shards, SHARD_CONCURRENCY, async (shard) => {
      await store.call(client.unlink(store.layout.shard(shard), store.layout.nextShard(shard)), 'destroy')
    })
  }
}
