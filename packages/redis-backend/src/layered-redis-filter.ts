import { BloomError, type BloomKey, type FilterParameters, type LayeredOptions, type LayerInfo } from '@bloomkit/core'
import {
  compoundErrorRate,
  createKeyHasher,
  decodeLayeredSnapshot,
  encodeLayeredSnapshot,
  checkPolicyKind,
  HASH_SCHEMES,
  KeyHasher,
  layerCapacity,
  layeredMergeRefused,
  noJsonForm,
  layerErrorRate,
  layerParameters,
  layerPolicyOf,
  layoutOfScheme,
  hashPairs,
  keyBatches,
  layerBatch,
  shardBitsOf,
  windowOf,
  type LayerPolicy,
} from '@bloomkit/core/store'
import { callRedis } from './errors.js'
import { checkName } from './key-names.js'
import { checkLayers, MAX_CHECK_KEYS } from './layered-read.js'
import { metaFields, STORE_FORMAT } from './meta.js'
import { checkClient, checkOptions, DEFAULT_SHARD_BITS, isCluster, type RedisClient, type RedisFilterOptions } from './options.js'
import { RedisBloomFilter } from './redis-bloom-filter.js'

/** Batches of at most this many keys (single calls) ask every layer in the one script: one command per check. */
const SCRIPT_ALL_KEYS = 64
/** Keys hashed per round trip by addMany/hasMany. */
const BATCH_KEYS = 4096
/** Extra life of a rotating layer past the end of its last window, so a check at the boundary never meets an expired key. */
const WINDOW_GRACE_MS = 60_000

/** Options of {@link RedisLayeredFilter.create}: a scalable (`growth`) or rotating (`window`) policy and the store options. */
export type RedisLayeredOptions = LayeredOptions & RedisFilterOptions

/**
 * One listed layer. `id` names its filter (`<name>:L<id>`), `index` is its place within its
 * window (what its error rate follows from) and `capacity` the new keys it takes.
 */
interface LayerEntry {
  readonly id: number
  readonly window: number
  readonly index: number
  readonly capacity: number
}

/**
 * Appends a layer unless the list changed since the caller read it (racing growers: one wins, the
 * others get the new list back). Drops entries of windows below ARGV[3] (rotating) with their counts.
 * KEYS[1] meta; ARGV: expected version, the new entry's window/index/capacity ('' for none), min window, meta TTL ms.
 * Returns {version, layers, the new layer's id or ''}.
 */
const GROW = `
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return redis.error_reply('BLOOMKIT_NOT_FOUND') end
if version ~= ARGV[1] then return {version, redis.call('HGET', KEYS[1], 'layers')} end
local kept = {}
local minWindow = tonumber(ARGV[3])
for entry in string.gmatch(redis.call('HGET', KEYS[1], 'layers'), '[^,]+') do
  local id, window = string.match(entry, '^(%d+)/(%d+)/')
  if tonumber(window) >= minWindow then table.insert(kept, entry) else redis.call('HDEL', KEYS[1], 'count:' .. id) end
end
local id = ''
if ARGV[2] ~= '' then
  id = tostring(redis.call('HINCRBY', KEYS[1], 'nextId', 1))
  table.insert(kept, id .. '/' .. ARGV[2])
end
local layers = table.concat(kept, ',')
version = tostring(tonumber(version) + 1)
redis.call('HSET', KEYS[1], 'layers', layers, 'version', version)
if tonumber(ARGV[4]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {version, layers, id}
`

/** The `layers` field of a layered meta, read as entries (docs/SPEC.md 9.8). */
export function parseEntries(text: string): LayerEntry[] {
  if (text === '') return []
  return text.split(',').map((entry) => {
    // A list no writer could have made would send checks to the wrong layers, or none.
    if (!/^\d{1,15}\/\d{1,15}\/\d{1,15}\/\d{1,16}$/.test(entry)) {
      throw new BloomError('BLOOM_CORRUPT_STORE', `a layered filter's meta lists a layer ${JSON.stringify(entry)}, not id/window/index/capacity (docs/SPEC.md 9.8)`)
    }
    const [id, window, index, capacity] = entry.split('/').map(Number)
    return { id, window, index, capacity }
  })
}

/** The meta hash fields of a layered filter's policy. */
function policyFields(policy: LayerPolicy): string[] {
  return [
    'format', String(STORE_FORMAT),
    'kind', 'layered',
    'policy', policy.kind,
    'capacity', String(policy.capacity),
    'errorRate', String(policy.errorRate),
    'growth', String(policy.growth),
    'tightening', String(policy.tightening),
    'seconds', String(policy.seconds),
    'keep', String(policy.keep),
    'seed', String(policy.seed),
    'scheme', policy.layout === undefined ? '0' : String(HASH_SCHEMES[policy.layout]),
    'shards', String(policy.shards ?? 0),
  ]
}

function policyOf(name: string, fields: Record<string, string>): LayerPolicy {
  if (fields.kind !== 'layered') {
    throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" is a fixed filter, not a layered one: open it with RedisBloomFilter.open`)
  }
  if (fields.format !== String(STORE_FORMAT)) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `filter "${name}" uses store format ${fields.format}; this release reads format ${STORE_FORMAT}`)
  }
  checkPolicyKind(fields.policy, `filter "${name}"`)
  try {
    const growth = Number(fields.growth)
    const shards = Number(fields.shards)
    return layerPolicyOf({
      capacity: Number(fields.capacity),
      errorRate: Number(fields.errorRate),
      growth: growth === 0 ? undefined : growth,
      tightening: Number(fields.tightening),
      seed: Number(fields.seed),
      layout: fields.scheme === '0' ? undefined : layoutOfScheme(fields.scheme, `filter "${name}"`),
      shards: shards === 0 ? undefined : shards,
      ...(fields.policy === 'rotating' ? { window: { seconds: Number(fields.seconds), keep: Number(fields.keep) } } : {}),
    } as LayeredOptions)
  } catch (error) {
    if (error instanceof BloomError && error.code === 'BLOOM_UNSUPPORTED_VERSION') throw error
    throw new BloomError('BLOOM_CORRUPT_STORE', `filter "${name}": its layered meta hash holds an impossible policy (${(error as Error).message})`, { cause: error })
  }
}

/** A layer as this process holds it: its entry, its filter, and the positions of the batch being checked. */
interface Layer {
  readonly entry: LayerEntry
  readonly filter: RedisBloomFilter
  readonly parameters: FilterParameters
  /** Its filter's meta and shard keys (`RedisBloomFilter.keys`) and epoch, for checks of all layers in one script. */
  readonly keys: readonly string[]
  readonly epoch: number
}

/**
 * A layered Bloom filter in Redis: its layers are ordinary bloomkit filters named `<name>:L<id>`,
 * listed (with each layer's count of new keys) in the meta hash `<name>:meta`, so every process
 * sees the same layers and the same growth.
 *
 * - **Scalable** (`growth`): when the newest layer has taken its capacity, one process adds the
 *   next layer (racing growers agree through one script: the list only changes if it is still the
 *   one the grower read). Adds reserve room in the layer's count before writing, so racing
 *   processes never put more than its capacity into a layer.
 * - **Rotating** (`window`): each window's layers expire by TTL `keep` windows after it (plus a
 *   minute), so an idle filter cleans itself; checks skip windows that have passed by the clock.
 *
 * A key is hashed once; each layer's positions follow from the same hash pair. `has`/`hasMany`
 * send every layer's check at once (in flight together, with a read of the list's version so that
 * a layer another process just added is checked too). Every method returns a Promise.
 */
export class RedisLayeredFilter {
  /** The filter's name: its keys are `<name>:meta` and those of the layers `<name>:L<id>`. */
  readonly name: string
  /** What decides the layers. */
  readonly policy: LayerPolicy
  private readonly client: RedisClient
  private readonly options: RedisFilterOptions
  private readonly meta: string
  private readonly hasher: KeyHasher
  private readonly clock: () => number
  private readonly timeout: number
  private version = ''
  private live: Layer[] = []
  /** The newest layer's count after this process's last add to it. */
  private newestCount = 0
  private closed = false
  /** Single has() calls of the current tick, checked together when it ends. */
  private gathered: { keys: BloomKey[]; waiters: Array<{ resolve: (found: boolean) => void; reject: (error: unknown) => void }> } | undefined

  private constructor(client: RedisClient, name: string, policy: LayerPolicy, hasher: KeyHasher, options: RedisFilterOptions & { clock?: () => number }) {
    this.client = client
    this.name = name
    this.policy = policy
    this.hasher = hasher
    this.options = options
    this.meta = `${name}:meta`
    this.clock = options.clock ?? Date.now
    this.timeout = options.timeout ?? 5000
  }

  /**
   * Creates the layered filter `name`, or opens it if one with the same policy exists (racing
   * creators end with one). Prefer `RedisBloomFilter.create`, which returns one when the options
   * have `growth` or `window`.
   * @throws BloomError `BLOOM_INVALID_PARAMETER`, `BLOOM_INCOMPATIBLE` (`name` holds another filter
   *   or another policy), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(redis: RedisClient, name: string, options: RedisLayeredOptions): Promise<RedisLayeredFilter> {
    const client = checkClient(redis)
    checkName(name)
    checkOptions(options)
    const policy = layerPolicyOf(options)
    const created = await callRedis(
      client.eval(`if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end redis.call('HSET', KEYS[1], unpack(ARGV)) return 1`, 1, `${name}:meta`, ...policyFields(policy), 'layers', '', 'version', '1', 'nextId', '0'),
      options.timeout ?? 5000,
      `create "${name}"`,
    )
    const filter = Number(created) === 1 ? new RedisLayeredFilter(client, name, policy, await createKeyHasher(policy.seed), options) : await RedisLayeredFilter.open(client, name, options)
    if (Number(created) !== 1 && JSON.stringify(filter.policy) !== JSON.stringify(policy)) {
      throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" exists with another policy: stored ${JSON.stringify(filter.policy)}, requested ${JSON.stringify(policy)}`)
    }
    await filter.refresh()
    return filter
  }

  /**
   * Opens the layered filter `name`: its policy and layers come from Redis.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_INCOMPATIBLE` (a fixed filter), `BLOOM_CORRUPT_STORE`,
   *   `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_DATA_LOST` (a listed layer is gone), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(redis: RedisClient, name: string, options: RedisFilterOptions & { clock?: () => number } = {}): Promise<RedisLayeredFilter> {
    const client = checkClient(redis)
    checkName(name)
    checkOptions(options)
    const fields = metaFields(await callRedis(client.hgetall(`${name}:meta`), options.timeout ?? 5000, `open "${name}"`))
    if (Object.keys(fields).length === 0) throw new BloomError('BLOOM_NOT_FOUND', `no filter named "${name}" in Redis`)
    const policy = policyOf(name, fields)
    const filter = new RedisLayeredFilter(client, name, policy, await createKeyHasher(policy.seed), options)
    await filter.refresh()
    return filter
  }

  /**
   * Loads a layered snapshot (format version 2) into `name`, which must be free: each layer is
   * imported as an ordinary filter (checked before it is used), then listed.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INCOMPATIBLE`
   *   (`name` is taken), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async import(redis: RedisClient, name: string, snapshot: Uint8Array, options: RedisFilterOptions & { clock?: () => number } = {}): Promise<RedisLayeredFilter> {
    const client = checkClient(redis)
    checkName(name)
    checkOptions(options)
    const { policy, layers } = decodeLayeredSnapshot(snapshot)
    const timeout = options.timeout ?? 5000
    const entries: string[] = []
    const counts: string[] = []
    for (const [id, layer] of layers.entries()) {
      const index = id > 0 && layers[id - 1].window === layer.window ? Number(entries[id - 1].split('/')[2]) + 1 : 0
      entries.push(`${id + 1}/${layer.window}/${index}/${layerCapacity(policy, index)}`)
      counts.push(`count:${id + 1}`, String(layer.count), `ready:${id + 1}`, '1')
    }
    const taken = await callRedis(client.exists(`${name}:meta`), timeout, `import "${name}"`)
    if (Number(taken) === 1) throw new BloomError('BLOOM_INCOMPATIBLE', `import: "${name}" already holds a filter; destroy it first or pick another name`)
    for (const [id, layer] of layers.entries()) {
      const v1 = encodeLayeredLayer(snapshot, layer)
      await RedisBloomFilter.import(client, `${name}:L${id + 1}`, v1, { ...options, ttl: undefined })
    }
    await callRedis(
      client.hset(`${name}:meta`, ...policyFields(policy), 'layers', entries.join(','), 'version', '1', 'nextId', String(layers.length), ...counts),
      timeout,
      `import "${name}"`,
    )
    return RedisLayeredFilter.open(client, name, options)
  }

  /** Deletes the layered filter `name` (meta and every layer). Resolves to false if there was none. */
  static async destroy(redis: RedisClient, name: string, options: RedisFilterOptions = {}): Promise<boolean> {
    const client = checkClient(redis)
    checkName(name)
    const timeout = options.timeout ?? 5000
    const fields = metaFields(await callRedis(client.hgetall(`${name}:meta`), timeout, `destroy "${name}"`))
    if (Object.keys(fields).length === 0) return false
    policyOf(name, fields)
    await callRedis(client.del(`${name}:meta`), timeout, `destroy "${name}"`)
    for (const entry of parseEntries(fields.layers ?? '')) await RedisBloomFilter.destroy(client, `${name}:L${entry.id}`, options)
    return true
  }

  /** Whether methods return plain values: never, on Redis. */
  get isSync(): false {
    return false
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed
  }

  /** Adds a key: true if it was new (no live layer held it). See {@link addMany}. */
  async add(key: BloomKey): Promise<boolean> {
    return (await this.addMany([key]))[0]
  }

  /** Whether any live layer may hold the key. */
  async has(key: BloomKey): Promise<boolean> {
    // A bad key gets its own error, not its tick's neighbours.
    if (typeof key !== 'string' && !(key instanceof Uint8Array)) return (await this.hasMany([key]))[0]
    this.checkOpen()
    // Calls made in the same tick share one check (one script for all their keys), as a fixed
    // filter's store gathers its single calls.
    let gathered = this.gathered
    if (gathered === undefined) {
      gathered = this.gathered = { keys: [], waiters: [] }
      queueMicrotask(() => this.checkGathered())
    }
    gathered.keys.push(key)
    return new Promise<boolean>((resolve, reject) => gathered.waiters.push({ resolve, reject }))
  }

  private checkGathered(): void {
    const { keys, waiters } = this.gathered!
    this.gathered = undefined
    this.hasMany(keys).then(
      (answers) => waiters.forEach((waiter, i) => waiter.resolve(answers[i])),
      (error: unknown) => waiters.forEach((waiter) => waiter.reject(error)),
    )
  }

  /**
   * Checks keys, in batches of 4096: per batch every layer's check is sent at once, with a read of
   * the list's version; a layer added meanwhile by another process is checked before answering.
   */
  async hasMany(keys: Iterable<BloomKey>): Promise<boolean[]> {
    this.checkOpen()
    const results: boolean[] = []
    for (const batch of keyBatches(keys, BATCH_KEYS)) {
      const { found } = await this.test(batch)
      for (let i = 0; i < batch.length; i++) results.push(found[i] === 1)
    }
    return results
  }

  /**
   * Adds keys: a key any live layer holds answers false and writes nothing; the others go into the
   * newest layer (of the current window), which grows the filter first when it is full. Counts are
   * kept in Redis (HINCRBY), so every process sees the same fill.
   */
  async addMany(keys: Iterable<BloomKey>): Promise<boolean[]> {
    this.checkOpen()
    const results: boolean[] = []
    for (const batch of keyBatches(keys, BATCH_KEYS)) {
      const { found, pairs } = await this.test(batch, true)
      const answers = new Array<boolean>(batch.length).fill(false)
      let pending = batch.map((_, i) => i).filter((i) => found[i] === 0)
      let previous: Layer | undefined
      while (pending.length > 0) {
        const layer = await this.writable()
        if (previous !== undefined && previous.entry.id !== layer.entry.id) {
          // Keys are judged one at a time (docs/SPEC.md section 8, 9.8 step 6): those left over
          // when a layer filled are checked again against it, since keys before them in the batch
          // went into it. Counts then do not depend on how keys are batched.
          pending = await this.stillNew(previous, pending, pairs)
          if (pending.length === 0) break
        }
        previous = layer
        const key = `count:${layer.entry.id}`
        let taking = pending
        if (this.policy.growth !== 0) {
          // Reserve room first (HINCRBY is atomic), so that racing processes never put more than
          // the layer's capacity into it between them; what goes unused is given back below.
          const want = Math.min(pending.length, Math.max(1, layer.entry.capacity - this.newestCount))
          const total = Number(await this.call(this.client.hincrby(this.meta, key, want), 'count'))
          const granted = Math.max(0, Math.min(want, layer.entry.capacity - (total - want)))
          if (granted === 0) {
            this.newestCount = Number(await this.call(this.client.hincrby(this.meta, key, -want), 'count'))
            this.newestCount = Math.max(this.newestCount, layer.entry.capacity) // full: the next round grows
            continue
          }
          taking = pending.slice(0, granted)
          pending = pending.slice(granted)
          const added = await this.setIn(layer, taking, pairs, answers)
          this.newestCount = Number(await this.call(this.client.hincrby(this.meta, key, added - want), 'count'))
        } else {
          pending = []
          const added = await this.setIn(layer, taking, pairs, answers)
          this.newestCount = Number(await this.call(this.client.hincrby(this.meta, key, added), 'count'))
        }
      }
      results.push(...answers)
    }
    return results
  }

  /** The keys of `pending` (indexes into the batch) that `layer` does not hold. */
  private async stillNew(layer: Layer, pending: number[], pairs: Uint32Array): Promise<number[]> {
    const out = new Uint8Array(pending.length)
    await layer.filter.bitStore.testBits(layerBatch(layer.parameters, pairs, pending), out)
    return pending.filter((_, slot) => out[slot] === 0)
  }

  /** Sets the bits of keys `taking` (indexes into the batch) in `layer`; records their answers; returns how many were new. */
  private async setIn(layer: Layer, taking: number[], pairs: Uint32Array, answers: boolean[]): Promise<number> {
    const positions = layerBatch(layer.parameters, pairs, taking)
    const out = new Uint8Array(taking.length)
    await layer.filter.bitStore.setBits(positions, out)
    let added = 0
    taking.forEach((i, slot) => {
      answers[i] = out[slot] === 1
      added += out[slot]
    })
    return added
  }

  /** Keys that were new when added, over the live layers, as counted in Redis. */
  async estimateCount(): Promise<number> {
    return (await this.layers()).reduce((sum, layer) => sum + layer.count, 0)
  }

  /** The false-positive probability of a `has` now: 1 − Π(1 − rate_i) over the live layers' current rates. */
  async errorRate(): Promise<number> {
    this.checkOpen()
    await this.refresh()
    return compoundErrorRate(await Promise.all(this.checked().map((layer) => layer.filter.errorRate())))
  }

  /** Each live layer, oldest first: capacity, count, the error rate it is sized for, parameters, window. */
  async layers(): Promise<LayerInfo[]> {
    this.checkOpen()
    await this.refresh()
    const live = this.checked()
    const counts = live.length === 0 ? [] : await this.call(this.client.hmget(this.meta, ...live.map((layer) => `count:${layer.entry.id}`)), 'layers')
    return live.map((layer, i) => ({
      capacity: layer.entry.capacity,
      count: Number(counts[i] ?? 0),
      errorRate: layerErrorRate(this.policy, layer.entry.index),
      parameters: layer.parameters,
      window: layer.entry.window,
    }))
  }

  /** The layered snapshot (docs/SPEC.md, section 8) of the live layers. */
  async export(): Promise<Uint8Array> {
    const infos = await this.layers()
    const snapshots = await Promise.all(this.checked().map((layer) => layer.filter.export()))
    return encodeLayeredSnapshot(this.policy, infos.map((info, i) => ({ window: info.window, count: info.count, snapshot: snapshots[i] })))
  }

  /** Throws a TypeError: a filter has no JSON form; use {@link export} (see `noJsonForm` in core). */
  toJSON(): never {
    throw noJsonForm()
  }

  /** Refused: which layer and window each key belongs to is not defined for a union. */
  async merge(_other: unknown): Promise<never> {
    this.checkOpen()
    throw layeredMergeRefused()
  }

  /**
   * Replaces the contents by exactly `keys`, in one layer sized for them (at least the first
   * capacity, at layer 0's error rate). The new layer is listed as the newest before it is filled,
   * so adds from any process meanwhile go into it and checks keep seeing the old layers; only then
   * are the layers before it dropped. Scalable filters only.
   */
  async rebuild(keys: Iterable<BloomKey> | AsyncIterable<BloomKey>): Promise<void> {
    this.checkOpen()
    if (this.policy.kind === 'rotating') throw new BloomError('BLOOM_INCOMPATIBLE', 'rebuild: a rotating filter forgets by itself; rebuild applies to scalable filters')
    const all: BloomKey[] = []
    for await (const key of keys as AsyncIterable<BloomKey>) all.push(key)
    const capacity = Math.max(this.policy.capacity, new Set(all.map((k) => (typeof k === 'string' ? `s${k}` : `b${Buffer.from(k).toString('hex')}`))).size)
    let id: number | undefined
    while (id === undefined) {
      await this.refresh()
      id = await this.appendLayer(0, capacity)
    }
    const layer = this.live.find((l) => l.entry.id === id)!
    const entry = layer.entry
    for (const batch of keyBatches(all, BATCH_KEYS)) {
      const positions = layerBatch(layer.parameters, hashPairs(this.hasher, batch))
      const out = new Uint8Array(batch.length)
      await layer.filter.bitStore.setBits(positions, out)
      await this.call(this.client.hincrby(this.meta, `count:${entry.id}`, out.reduce((a, b) => a + b, 0)), 'rebuild')
    }
    // Drop every layer listed before the rebuilt one, in one step that fails if the list moved: then read it and retry.
    for (;;) {
      await this.refresh()
      const at = this.live.findIndex((l) => l.entry.id === entry.id)
      const dropped = this.live.slice(0, at)
      if (dropped.length === 0) return
      const kept = this.live.slice(at).map((l) => `${l.entry.id}/${l.entry.window}/${l.entry.index}/${l.entry.capacity}`).join(',')
      const result = await this.call(
        this.client.eval(
          `if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
           redis.call('HSET', KEYS[1], 'layers', ARGV[2], 'version', tostring(tonumber(ARGV[1]) + 1))
           for i = 3, #ARGV do redis.call('HDEL', KEYS[1], 'count:' .. ARGV[i]) end
           return 1`,
          1,
          this.meta,
          this.version,
          kept,
          ...dropped.map((l) => String(l.entry.id)),
        ),
        'rebuild',
      )
      if (Number(result) === 1) {
        for (const old of dropped) await old.filter.destroy()
        await this.refresh()
        return
      }
    }
  }

  /** Sets (seconds) or removes (`null`) the TTL of the whole filter: meta and every layer. Scalable filters only (a rotating one expires its layers itself). */
  async setTtl(seconds: number | null): Promise<void> {
    this.checkOpen()
    if (this.policy.kind === 'rotating') throw new BloomError('BLOOM_INCOMPATIBLE', 'setTtl: a rotating filter’s layers expire by their windows')
    await this.refresh()
    await this.call(seconds === null ? this.client.persist(this.meta) : this.client.expire(this.meta, seconds), 'setTtl')
    for (const layer of this.live) await layer.filter.setTtl(seconds)
  }

  /** Seconds until the filter's meta expires (fractional), or `null` if it has no TTL. */
  async ttl(): Promise<number | null> {
    this.checkOpen()
    const ms = Number(await this.call(this.client.pttl(this.meta), 'ttl'))
    if (ms === -2) throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    return ms < 0 ? null : ms / 1000
  }

  /** Drops every layer: the filter is as new. */
  async clear(): Promise<void> {
    this.checkOpen()
    await this.refresh()
    for (;;) {
      const old = this.live
      const [version, layers] = (await this.call(this.client.eval(GROW, 1, this.meta, this.version, '', String(Number.MAX_SAFE_INTEGER), '0'), 'clear')) as [string, string]
      if (layers === '') {
        for (const layer of old) await layer.filter.destroy()
        await this.adopt(String(version), '')
        return
      }
      await this.refresh()
    }
  }

  /** Deletes the filter from Redis (meta, then every layer) and closes this instance. */
  async destroy(): Promise<void> {
    this.checkOpen()
    await RedisLayeredFilter.destroy(this.client, this.name, this.options)
    await this.close()
  }

  /** Closes this instance (the Redis client stays the caller's); idempotent. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const layer of this.live) await layer.filter.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the filter is closed')
  }

  private call<T>(promise: Promise<T>, what: string): Promise<T> {
    return callRedis(promise, this.timeout, `${what} "${this.name}"`)
  }

  /** The window of the clock now (rotating), 0 for scalable. */
  private window(): number {
    return this.policy.kind === 'rotating' ? windowOf(this.policy, this.clock()) : 0
  }

  /** Layers a check must ask: every listed one (scalable), those of the last `keep` windows (rotating). */
  private checked(): Layer[] {
    if (this.policy.kind === 'scalable') return this.live
    const oldest = this.window() - this.policy.keep + 1
    return this.live.filter((layer) => layer.entry.window >= oldest)
  }

  /**
   * Layers an add judges keys against (docs/SPEC.md 9.8, adding step 1): the checked ones, except
   * that while a rebuild runs (a scalable list with an index-0 layer after the first) only that
   * layer and those after it. The layers before it are about to be dropped: a key they seem to
   * hold (a false positive) must still be written, or it would be absent once they are gone.
   */
  private judgedForAdds(): Layer[] {
    const layers = this.checked()
    if (this.policy.kind !== 'scalable') return layers
    for (let i = layers.length - 1; i > 0; i--) if (layers[i].entry.index === 0) return layers.slice(i)
    return layers
  }

  /** Reads the layer list and opens layers this process does not hold yet. */
  private async refresh(): Promise<void> {
    const [layers, version] = (await this.call(this.client.hmget(this.meta, 'layers', 'version'), 'read layers')) as (string | null)[]
    if (version === null) throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    await this.adopt(version, layers ?? '')
  }

  private async adopt(version: string, layers: string): Promise<void> {
    if (version === this.version) return
    const entries = parseEntries(layers)
    const held = new Map(this.live.map((layer) => [layer.entry.id, layer]))
    const fresh = entries.filter((entry) => !held.has(entry.id))
    const ready = fresh.length === 0 ? [] : await this.call(this.client.hmget(this.meta, ...fresh.map((entry) => `ready:${entry.id}`)), 'read layers')
    const live: Layer[] = []
    for (const entry of entries) live.push(held.get(entry.id) ?? (await this.openLayer(entry, ready[fresh.indexOf(entry)] === '1')))
    for (const [id, layer] of held) if (!entries.some((entry) => entry.id === id)) await layer.filter.close()
    this.live = live
    this.version = version
    const newest = entries[entries.length - 1]
    if (newest !== undefined) this.newestCount = Number((await this.call(this.client.hget(this.meta, `count:${newest.id}`), 'count')) ?? 0)
  }

  /**
   * Opens a listed layer, creating it if its grower has not yet (it may have died between listing
   * and creating: `create` with the listed parameters is idempotent across processes).
   */
  private async openLayer(entry: LayerEntry, ready: boolean): Promise<Layer> {
    const name = `${this.name}:L${entry.id}`
    let filter: RedisBloomFilter
    if (ready) {
      // Created and listed as ready: if it is gone now, its keys are lost, and answering would give false negatives.
      filter = await RedisBloomFilter.open(this.client, name, this.options).catch((error: unknown) => {
        if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') {
          throw new BloomError('BLOOM_DATA_LOST', `filter "${this.name}": its layer ${name} is gone (evicted, expired or deleted); rebuild the filter or import a snapshot`, { cause: error })
        }
        throw error
      })
    } else {
      const ttl = this.policy.kind === 'rotating' ? this.layerTtlSeconds(entry) : await this.metaTtlSeconds()
      filter = await RedisBloomFilter.fromParameters(this.client, name, this.parametersOf(entry), { ...this.options, ttl }).catch((error: unknown) => {
        // Another writer created it first, sized its own way (docs/SPEC.md 9.8, step 4): its
        // parameters are those its meta holds.
        if (error instanceof BloomError && error.code === 'BLOOM_INCOMPATIBLE') return RedisBloomFilter.open(this.client, name, this.options)
        throw error
      })
      await this.call(this.client.hset(this.meta, `ready:${entry.id}`, '1'), 'create layer')
    }
    const parameters = filter.parameters
    return { entry, filter, parameters, keys: filter.keys, epoch: filter.epoch }
  }

  /**
   * A new layer's parameters: core's layer sizing, with (unless the policy fixes shards) as many
   * shards as keep each at most 4 MiB, as a fixed Redis filter has.
   */
  private parametersOf(entry: LayerEntry): FilterParameters {
    const base = layerParameters(this.policy, entry.index, entry.capacity)
    if (this.policy.shards !== undefined || shardBitsOf(base) <= DEFAULT_SHARD_BITS) return base
    let shards = Math.ceil(base.bits / DEFAULT_SHARD_BITS)
    let parameters = layerParameters({ ...this.policy, shards }, entry.index, entry.capacity)
    while (shardBitsOf(parameters) > DEFAULT_SHARD_BITS) parameters = layerParameters({ ...this.policy, shards: ++shards }, entry.index, entry.capacity)
    return parameters
  }

  /** The TTL a scalable filter's meta has now (set by setTtl), for a layer created later; undefined for none. */
  private async metaTtlSeconds(): Promise<number | undefined> {
    const ms = Number(await this.call(this.client.pttl(this.meta), 'ttl'))
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : undefined
  }

  /** A rotating layer lives until `keep` windows after its own (plus a grace); scalable layers have no TTL of their own. */
  private layerTtlSeconds(entry: LayerEntry): number | undefined {
    if (this.policy.kind === 'scalable') return undefined
    const endMs = (entry.window + this.policy.keep) * this.policy.seconds * 1000 + WINDOW_GRACE_MS
    return Math.max(1, Math.ceil((endMs - this.clock()) / 1000))
  }

  /** The layer new keys go into now, growing (or opening the window's first layer) when needed. */
  private async writable(): Promise<Layer> {
    for (;;) {
      const window = this.window()
      const newest = this.live[this.live.length - 1]
      if (newest !== undefined && newest.entry.window === window && (this.policy.growth === 0 || this.newestCount < newest.entry.capacity)) return newest
      const index = newest !== undefined && newest.entry.window === window ? newest.entry.index + 1 : 0
      const capacity = Math.max(layerCapacity(this.policy, index), newest !== undefined && newest.entry.window === window ? newest.entry.capacity * this.policy.growth : 0)
      await this.appendLayer(index, capacity, window)
    }
  }

  /**
   * Lists a new layer unless the list moved since this process read it; either way adopts the
   * list as it is now. Returns the new layer's id, or undefined if the list had moved.
   */
  private async appendLayer(index: number, capacity: number, window = this.window()): Promise<number | undefined> {
    const minWindow = this.policy.kind === 'rotating' ? window - this.policy.keep + 1 : 0
    const metaTtl = this.policy.kind === 'rotating' ? (this.policy.keep + 1) * this.policy.seconds * 1000 + WINDOW_GRACE_MS : 0
    const [version, layers, id] = (await this.call(
      this.client.eval(GROW, 1, this.meta, this.version, `${window}/${index}/${capacity}`, String(minWindow), String(metaTtl)),
      'grow',
    )) as [string, string, string]
    await this.adopt(String(version), String(layers ?? ''))
    return id === '' || id === null || id === undefined ? undefined : Number(id)
  }

  /**
   * out[i] = 1 where any checked layer holds key i. Hashes each key once and fills every layer's
   * positions from the pair. On a standalone server one script asks every layer and reads the
   * list's version (layered-read.ts); on a Cluster every layer's check and a read of the version
   * are sent at once. A layer added meanwhile by another process is checked before answering.
   */
  private async test(keys: BloomKey[], adding = false): Promise<{ found: Uint8Array; pairs: Uint32Array }> {
    const found = new Uint8Array(keys.length)
    const judged = () => (adding ? this.judgedForAdds() : this.checked())
    let layers = judged()
    const pairs = hashPairs(this.hasher, keys)
    const ask = (layer: Layer, batch = layerBatch(layer.parameters, pairs)): Promise<Uint8Array> => {
      const out = new Uint8Array(keys.length)
      return layer.filter.bitStore.testBits(batch, out).then(() => out)
    }
    let version: string | null
    if (!isCluster(this.client) && keys.length <= MAX_CHECK_KEYS) {
      const batches = layers.map((layer) => layerBatch(layer.parameters, pairs))
      // A large batch reads a blocked layer's blocks by the layer's own path (plain GETRANGEs, replies
      // read in place): cheaper per key than a script's Lua calls. Everything else goes in the one script.
      const own = layers.map((layer) => keys.length > SCRIPT_ALL_KEYS && layer.parameters.layout === 'blocked')
      const scripted = layers.flatMap((layer, j) => (own[j] ? [] : [j]))
      const checked = scripted.map((j) => ({ keys: layers[j].keys, parameters: layers[j].parameters, epoch: layers[j].epoch, batch: batches[j] }))
      const [answer, ...outs] = await Promise.all([
        checkLayers(this.client, this.meta, checked, keys.length, this.options.scanBytesPerKey ?? 512, this.timeout, `check "${this.name}"`),
        ...layers.flatMap((layer, j) => (own[j] ? [ask(layer, batches[j])] : [])),
      ])
      found.set(answer.found)
      for (const out of outs) for (let i = 0; i < keys.length; i++) found[i] |= out[i]
      // Layers the script could not probe (a meta changed, a shard lost): their own path raises the precise error, or answers.
      for (const out of await Promise.all(answer.unanswered.map((s) => ask(layers[scripted[s]], batches[scripted[s]])))) for (let i = 0; i < keys.length; i++) found[i] |= out[i]
      version = answer.version
    } else {
      const [read, ...answers] = await Promise.all([this.call(this.client.hget(this.meta, 'version'), 'check') as Promise<string | null>, ...layers.map((layer) => ask(layer))])
      for (const out of answers) for (let i = 0; i < keys.length; i++) found[i] |= out[i]
      version = read
    }
    if (version === null) throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
    if (version !== this.version) {
      // The list moved while we asked: ask the layers we did not know about as well.
      const known = new Set(layers.map((layer) => layer.entry.id))
      await this.refresh()
      layers = judged().filter((layer) => !known.has(layer.entry.id))
      for (const out of await Promise.all(layers.map((layer) => ask(layer)))) for (let i = 0; i < keys.length; i++) found[i] |= out[i]
    }
    return { found, pairs }
  }
}

/** The version-1 snapshot of one layer inside a layered snapshot. */
function encodeLayeredLayer(snapshot: Uint8Array, layer: { payload: Uint8Array }): Uint8Array {
  // The payload is a view into `snapshot`; its version-1 snapshot starts 40 bytes before it and ends 4 after.
  const start = layer.payload.byteOffset - snapshot.byteOffset - 40
  return snapshot.subarray(start, start + 40 + layer.payload.length + 4)
}
