import { BloomError, type FilterParameters } from '@bloomkit/core'
import { type DropReason, layeredBatch, type LayerEntry, type LayerPolicy, type LayersAnswer, type LayerStorage, type StoredLayer, layerPolicies } from '@bloomkit/core/store'
import { callRedis, NOT_FOUND_REPLY } from '../errors.js'
import { checkLayers, MAX_CHECK_KEYS } from './layered-read.js'
import { GROW, LAYERED_CHECKED_FIELDS, layeredFeedLength, parseEntries, RESERVE, SETTLE, UNLIST, verifyLayeredCheck } from './layered-meta.js'
import { badField, storedInteger } from '../layout/stored-numbers.js'
import { layerName, metaKey } from '../layout/key-names.js'
import { DEFAULT_SHARD_BITS, type RedisSettings } from '../options.js'
import { isCluster, type RedisClient } from '../wire/client.js'
import { runScript } from '../wire/script.js'
import { destroyFilter } from '../operations/destroy.js'
import { probeReplicas, replicatedLayers } from '../replica/layer-replicas.js'
import { createLayer, openLayer, type LayerSettings, type RedisLayer } from './redis-layer.js'

const { layerParameters, maxWindow } = layerPolicies
const { layerBatch } = layeredBatch

/** Batches of at most this many keys (single calls) ask every layer in the one script: one command per check. */
const SCRIPT_ALL_KEYS = 64
/** The checked fields that never change after create: the policy as the filter was opened with it. */
const POLICY_FIELDS = LAYERED_CHECKED_FIELDS.filter((field) => field !== 'layers' && field !== 'version' && field !== 'nextId')
/** Extra life of a rotating layer past the end of its last window, so a check at the boundary never meets an expired key. */
const WINDOW_GRACE_MS = 60_000

/** A layer whose probe found it gone, with the error to raise if it is still listed. */
interface LostLayer {
  readonly layer: RedisLayer
  readonly error: unknown
}

/**
 * Whether `error` may mean that the layer was dropped by another process: its filter is gone
 * (`BLOOM_DATA_LOST`), or this process released it on reading a list without it (`BLOOM_CLOSED`).
 * Only a read of the list tells which (a layer still listed as ready and gone is lost).
 */
function isLayerGone(error: unknown): boolean {
  return error instanceof BloomError && (error.code === 'BLOOM_DATA_LOST' || error.code === 'BLOOM_CLOSED')
}

/**
 * A layered filter's storage in Redis (docs/SPEC.md 9.8): the list in the meta hash `<name>:meta`,
 * each layer the shards of an ordinary fixed filter `<name>:L<id>` (redis-layer.ts), each layer's count a field of the meta that
 * every process changes with HINCRBY. Core's `LayeredFilter` decides; this only reads and writes.
 *
 * Race rules, as the spec states them: a layer is appended by one compare-and-set script on the
 * list's `version` (racing growers: one wins, the others adopt the list they lost to); a layer is
 * created, then marked `ready:<id>`, and a listed layer not yet ready is created by whoever meets
 * it first (creation is idempotent); room in a layer is reserved (HINCRBY) before keys are
 * written, so racing writers never put more than its capacity into it; a check reads the list's
 * version with (or after) its probes, and asks the layers listed meanwhile before answering.
 */
export class RedisLayers implements LayerStorage<false> {
  readonly sync = false
  layers: readonly RedisLayer[] = []
  /** The list's `version` as this process last read it ('' before the first read). */
  private version = ''
  private readonly meta: string
  private readonly timeout: number
  /** For a layered meta of format 2, its `feedLength`: every layer has feeds of it (docs/SPEC.md 9.12); 0 for none. */
  readonly feedLength: number
  /** How each layer's filter is opened or created: the store options, the layered meta's feed, the replica. */
  private readonly layerSettings: LayerSettings
  /** Opened with `replica`: every layer answers through its own (replica/layer-replicas.ts). */
  private readonly replicated: boolean

  constructor(
    readonly client: RedisClient,
    readonly name: string,
    readonly policy: LayerPolicy,
    /** The layered filter's options, checked and resolved once by its public method: each layer's too. */
    readonly settings: RedisSettings,
    private readonly clock: () => number,
    /** The meta's fields as open read them: its policy fields must stay as they were. */
    private readonly opened: Readonly<Record<string, string | undefined>>,
  ) {
    this.meta = metaKey(name)
    this.timeout = settings.timeout
    // A layered meta of format 2 has its layers made with feeds of its feedLength (docs/SPEC.md 9.12).
    this.feedLength = layeredFeedLength(name, opened)
    this.replicated = replicatedLayers(name, settings.replica, this.feedLength)
    this.layerSettings = {
      client,
      name,
      timeout: this.timeout,
      lockWait: settings.lockWait,
      store: settings.store,
      feedLength: this.feedLength,
      replica: this.replicated ? settings.replica : undefined,
    }
  }

  /** A Redis call with the filter's timeout, its errors as BloomErrors naming `what`. */
  call<T>(promise: Promise<T>, what: string): Promise<T> {
    return callRedis(promise, this.timeout, `${what} "${this.name}"`)
  }

  /**
   * Reads the list (opening layers this process does not hold yet) and every listed layer's count,
   * with the meta's other checked fields: a meta that fails its `check`, or whose policy is no
   * longer the one this filter opened with, is `BLOOM_CORRUPT_STORE`.
   */
  async refresh(): Promise<void> {
    for (;;) {
      const { layers, version, nextId } = await this.readList()
      if (version === this.version) return this.readCounts(this.layers)
      // Numbers as a writer writes them, and ids all handed out: a growing writer takes nextId + 1 for its new layer.
      const next = storedInteger(`filter "${this.name}"`, 'nextId', nextId)
      const listed = parseEntries(layers).find((entry) => entry.id > next)
      if (listed !== undefined) throw badField(`filter "${this.name}"`, 'nextId', nextId, `at least every listed id (${listed.id})`)
      if (await this.adopt(version, layers)) return
    }
  }

  /**
   * Whether any of `layers` is no longer listed, the list read again; their count fields, which
   * a reservation may have left behind, are removed (ids are never listed again).
   */
  async unlisted(layers: readonly StoredLayer<false>[]): Promise<boolean> {
    await this.refresh()
    const gone = layers.filter((layer) => !this.holds(layer.entry.id))
    // The settle script removes an unlisted layer's count field.
    for (const layer of gone) await this.metaScript(SETTLE, [String(layer.entry.id), '0'], 'count')
    return gone.length > 0
  }

  async append(entry: Omit<LayerEntry, 'id'>, parameters: FilterParameters): Promise<RedisLayer | undefined> {
    const rotating = this.policy.kind === 'rotating'
    const minWindow = rotating ? entry.window - this.policy.keep + 1 : 0
    // In integers: (keep + 1) · seconds · 1000 may pass 2^53.
    const metaTtl = rotating ? String(BigInt(this.policy.keep + 1) * BigInt(this.policy.seconds) * 1000n + BigInt(WINDOW_GRACE_MS)) : '0'
    const [version, layers, id] = (await runScript(this.client, GROW, [1, this.meta, this.version, `${entry.window}/${entry.index}/${entry.capacity}`, String(minWindow), metaTtl], this.timeout, `grow "${this.name}"`, { replies: 'text' })) as [string, string, string | undefined]
    if (id === undefined || id === '' || id === null) {
      if (!(await this.adopt(String(version), String(layers ?? '')))) await this.refresh()
      return undefined
    }
    const listed = { id: Number(id), ...entry }
    const made = await this.makeLayer(listed, parameters).catch(async (error: unknown) => {
      // Another process (a rebuild, clear) unlisted and destroyed the layer before it was made: the list moved on.
      if (!isLayerGone(error) && !(error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND')) throw error
      await this.refresh()
      if (this.holds(listed.id)) throw error
      return undefined
    })
    if (made !== undefined && !(await this.adopt(String(version), String(layers ?? ''), made))) await this.refresh()
    // The list as adopted is at least as new as the one that listed it: an id missing from it is gone for good.
    if (made !== undefined && this.holds(listed.id)) return this.layers.find((layer) => layer.entry.id === listed.id)
    // Unlisted meanwhile: whatever was created for it after its destruction would stay forever.
    await made?.close()
    await destroyFilter(this.client, layerName(this.name, listed.id), this.timeout)
    return undefined
  }

  /**
   * After a listed layer was found gone when opened or made: undefined when the list has moved
   * on since `version` (another process dropped the layer; the caller reads the list again), else
   * `error` (a layer listed as ready and gone is lost, 9.9).
   */
  private async goneUnlessMoved(error: unknown, version: string): Promise<undefined> {
    const gone = isLayerGone(error) || (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND')
    if (!gone || (await this.call(this.client.hget(this.meta, 'version'), 'read layers')) === version) throw error
    return undefined
  }

  /** Whether the list as this process holds it names layer `id`. */
  private holds(id: number): boolean {
    return this.layers.some((layer) => layer.entry.id === id)
  }

  async drop(gone: readonly StoredLayer<false>[], reason: DropReason): Promise<void> {
    if (gone.length === 0) return
    const [version, layers] = (await runScript(this.client, UNLIST, [1, this.meta, ...gone.map((layer) => String(layer.entry.id))], this.timeout, `drop layers "${this.name}"`, { replies: 'text' })) as [string, string]
    if (!(await this.adopt(String(version), String(layers ?? '')))) await this.refresh()
    // A passed window's layers expire by their TTL: a process whose clock is a little behind may still read them.
    if (reason === 'cleared') for (const layer of gone) await destroyFilter(this.client, (layer as RedisLayer).name, this.timeout)
  }

  async reserve(layer: StoredLayer<false>, want: number): Promise<number> {
    const capacity = layer.entry.capacity
    const [version, total, granted] = (await this.metaScript(RESERVE, [String(layer.entry.id), String(want), String(capacity)], 'count')) as [Buffer, Buffer, Buffer?]
    // Racing writers filled it (the reservation was given back): the layer is full for this process.
    if (granted !== undefined && Number(granted.toString()) === 0) layer.count = Math.max(Number(total.toString()), capacity)
    // Not listed any more (granted nothing), or the list moved: core goes on from the list as it is now.
    if (granted === undefined || version.toString() !== this.version) await this.refresh()
    return granted === undefined ? 0 : Number(granted.toString())
  }

  /**
   * Settles the count in the same step as a read of the list's version (docs/SPEC.md 9.8, adding
   * step 7): when the list moved while the keys were written, it is read again, and core writes
   * again the keys that went into a layer that is no longer judged.
   */
  async settle(layer: StoredLayer<false>, wanted: number, added: number): Promise<void> {
    const [version, count] = (await this.metaScript(SETTLE, [String(layer.entry.id), String(added - wanted)], 'count')) as [Buffer, Buffer]
    if (count.length > 0) layer.count = Number(count.toString())
    if (version.toString() !== this.version) await this.refresh()
  }

  /**
   * found[i] = 1 where any of `layers` holds key i. On a standalone server one script asks every
   * layer and reads the list's version (layered-read.ts); on a Cluster every layer's check and a
   * read of the version are sent at once. When the list moved meanwhile, it is read again and the
   * layers listed meanwhile are asked too; a layer found gone (`BLOOM_DATA_LOST`) is an error only
   * if the list read after still holds it: one dropped meanwhile (a rebuild, `clear`, a passed
   * window) took its keys with it (9.8, Checking).
   */
  async testLayers(asked: readonly StoredLayer<false>[], pairs: Uint32Array, size: number): Promise<LayersAnswer> {
    const found = new Uint8Array(size)
    const held = this.version
    // Layers held but not asked (a rotating filter's passed windows) are not asked later either.
    const probed = new Set([...this.layers, ...asked].map((layer) => layer.entry.id))
    let layers = asked as readonly RedisLayer[]
    for (;;) {
      const { version, lost } = await this.probe(layers, pairs, size, found)
      if (version === null) throw this.gone()
      if (version === held && lost.length === 0) return { found }
      await this.refresh()
      const listed = new Set(this.layers.map((layer) => layer.entry.id))
      const stillListed = lost.find(({ layer }) => listed.has(layer.entry.id))
      if (stillListed !== undefined) throw stillListed.error
      layers = this.layers.filter((layer) => !probed.has(layer.entry.id))
      if (layers.length === 0) return { found }
      for (const layer of layers) probed.add(layer.entry.id)
    }
  }

  /**
   * Asks `layers` for the keys, ORing answers into `found`, and reads the list's version with (or
   * beside) the probes. Layers that were gone are returned with their error, for the caller to judge.
   */
  private async probe(layers: readonly RedisLayer[], pairs: Uint32Array, size: number, found: Uint8Array): Promise<{ version: string | null; lost: LostLayer[] }> {
    if (this.replicated) {
      // Keys every replica shows present need no round trip; else the version, read after the call began.
      const { lost, allFound } = await probeReplicas(layers, pairs, size, found, isLayerGone)
      return { version: allFound && lost.length === 0 ? this.version : await this.call(this.client.hget(this.meta, 'version'), 'check'), lost }
    }
    const lost: LostLayer[] = []
    const or = (out: Uint8Array) => {
      for (let i = 0; i < size; i++) found[i] |= out[i]
    }
    const ask = (layer: RedisLayer, batch = layerBatch(layer.store.parameters, pairs)): Promise<void> => {
      const out = new Uint8Array(size)
      return layer.store.testBits(batch, out).then(
        () => or(out),
        (error: unknown) => {
          if (!isLayerGone(error)) throw error
          lost.push({ layer, error })
        },
      )
    }
    if (isCluster(this.client) || size > MAX_CHECK_KEYS) {
      const [version] = await Promise.all([this.call(this.client.hget(this.meta, 'version'), 'check'), ...layers.map((layer) => ask(layer))])
      return { version, lost }
    }
    const batches = layers.map((layer) => layerBatch(layer.store.parameters, pairs))
    // A large batch reads a blocked layer's blocks by the layer's own path (plain GETRANGEs, replies
    // read in place): cheaper per key than a script's Lua calls. Everything else goes in the one script.
    const own = layers.map((layer) => size > SCRIPT_ALL_KEYS && layer.store.parameters.layout === 'blocked')
    const scripted = layers.flatMap((_, j) => (own[j] ? [] : [j]))
    const checked = scripted.map((j) => ({ keys: layers[j].keys, parameters: layers[j].store.parameters, epoch: layers[j].shards.epoch, feedLength: layers[j].shards.feedLength, batch: batches[j] }))
    const [answer] = await Promise.all([
      checkLayers(this.client, this.meta, checked, size, this.settings.store.scanBytesPerKey, this.timeout, `check "${this.name}"`),
      ...layers.flatMap((layer, j) => (own[j] ? [ask(layer, batches[j])] : [])),
    ])
    or(answer.found)
    // Layers the script could not probe (a meta changed, a shard lost): their own path raises the precise error, or answers.
    await Promise.all(answer.unanswered.map((s) => ask(layers[scripted[s]], batches[scripted[s]])))
    return { version: answer.version, lost }
  }

  async close(): Promise<void> {
    for (const layer of this.layers) await layer.close()
  }

  /**
   * The list and its version with the meta's other checked fields: a meta that fails its `check`,
   * or whose policy is no longer the one this filter opened with, is `BLOOM_CORRUPT_STORE`.
   */
  private async readList(): Promise<{ layers: string; version: string; nextId: string | undefined }> {
    const values = await this.call(this.client.hmget(this.meta, ...LAYERED_CHECKED_FIELDS, 'check'), 'read layers')
    const fields: Record<string, string | undefined> = {}
    LAYERED_CHECKED_FIELDS.forEach((field, i) => (fields[field] = values[i] ?? undefined))
    fields.check = values[LAYERED_CHECKED_FIELDS.length] ?? undefined
    const { layers, version } = fields
    if (version === undefined) throw this.gone()
    verifyLayeredCheck(this.name, fields)
    for (const field of POLICY_FIELDS) {
      if (fields[field] !== this.opened[field]) {
        throw new BloomError(
          'BLOOM_CORRUPT_STORE',
          `filter "${this.name}": its layered meta's ${field} changed under an open filter (${JSON.stringify(this.opened[field] ?? null)} → ${JSON.stringify(fields[field] ?? null)}); open it again`,
        )
      }
    }
    return { layers: layers ?? '', version, nextId: fields.nextId }
  }

  /** A script on the meta, a reply that the meta is gone answered `BLOOM_NOT_FOUND`. */
  private async metaScript(script: { readonly body: string; readonly sha: string }, args: readonly string[], what: string): Promise<unknown> {
    return runScript(this.client, script, [1, this.meta, ...args], this.timeout, `${what} "${this.name}"`).catch((error: unknown) => {
      throw String((error as Error)?.message).includes(NOT_FOUND_REPLY) ? this.gone() : error
    })
  }

  /** `BLOOM_NOT_FOUND`: the meta is gone under an open filter. */
  private gone(): BloomError {
    return new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}" no longer exists (expired or destroyed)`)
  }

  /** Holds the list `text` of `version`: opens layers new to this process (`made`: one it just made), closes those unlisted, reads counts. */
  private async adopt(version: string, text: string, made?: RedisLayer): Promise<boolean> {
    if (storedInteger(`filter "${this.name}"`, 'version', version) < 1) throw badField(`filter "${this.name}"`, 'version', version, 'at least 1')
    // Calls of one instance run at once: a list older than one another call adopted meanwhile is not
    // installed (versions only grow), or it would close layers that list holds and bring back dropped ones.
    const outdated = () => this.version !== '' && Number(this.version) > Number(version)
    if (outdated()) return true
    const entries = parseEntries(text)
    const last = this.policy.kind === 'rotating' ? maxWindow(this.policy) : 0
    // A window past the last one (docs/SPEC.md 8) no writer makes: its arithmetic would not be exact.
    const beyond = entries.find((entry) => entry.window > last)
    if (beyond !== undefined) throw new BloomError('BLOOM_CORRUPT_STORE', `filter "${this.name}": its layered meta lists a layer of window ${beyond.window}, past the last window ${last}`)
    const held = new Map(this.layers.map((layer) => [layer.entry.id, layer]))
    if (made !== undefined) held.set(made.entry.id, made)
    const fresh = entries.filter((entry) => !held.has(entry.id))
    // The ready fields with the version, in one read: an entry unlisted meanwhile has lost its ready field,
    // and taken for not created yet it would be created again, empty.
    const [now, ...ready] = fresh.length === 0 ? [version] : await this.call(this.client.hmget(this.meta, 'version', ...fresh.map((entry) => `ready:${entry.id}`)), 'read layers')
    if (now !== version) return false
    const layers: RedisLayer[] = []
    for (const [i, entry] of fresh.entries()) {
      // Anything else than `1` or nothing: a layer taken for not created yet would be created empty, its keys lost.
      if ((ready[i] ?? '1') !== '1') throw badField(`filter "${this.name}"`, `ready:${entry.id}`, ready[i], '1 or missing')
    }
    for (const entry of entries) {
      const layer = held.get(entry.id) ?? (await this.openLayer(entry, { ready: ready[fresh.indexOf(entry)] === '1' }).catch((error: unknown) => this.goneUnlessMoved(error, version)))
      if (layer === undefined) return false
      layers.push(layer)
    }
    if (outdated()) return true
    const released = [...held.values(), ...this.layers].filter((layer) => !entries.some((entry) => entry.id === layer.entry.id))
    this.layers = layers
    this.version = version
    for (const layer of new Set(released)) await layer.close()
    await this.readCounts(layers)
    return true
  }

  private async readCounts(layers: readonly RedisLayer[]): Promise<void> {
    if (layers.length === 0) return
    const counts = await this.call(this.client.hmget(this.meta, ...layers.map((layer) => `count:${layer.entry.id}`)), 'count')
    // Written by HINCRBY only (never below 0); missing is 0. Above the capacity is possible (9.8, Counts): the layer is full.
    layers.forEach((layer, i) => {
      const text = counts[i] ?? undefined
      layer.count = text === undefined ? 0 : storedInteger(`filter "${this.name}"`, `count:${layer.entry.id}`, text)
    })
  }

  /**
   * Opens a listed layer, creating it if its grower has not yet (it may have died between listing
   * and creating: creation with the listed parameters is idempotent across processes).
   */
  private async openLayer(entry: LayerEntry, { ready }: { readonly ready: boolean }): Promise<RedisLayer> {
    if (!ready) return this.makeLayer(entry, layerParameters(this.policy, entry.index, entry.capacity, DEFAULT_SHARD_BITS))
    // Created and listed as ready: if it is gone now, its keys are lost, and answering would give false negatives.
    return openLayer(this.layerSettings, entry).catch((error: unknown) => {
      if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') {
        throw new BloomError('BLOOM_DATA_LOST', `filter "${this.name}": its layer ${layerName(this.name, entry.id)} is gone (evicted, expired or deleted); rebuild the filter or import a snapshot`, { cause: error })
      }
      throw error
    })
  }

  /**
   * Creates (or opens, if another writer did) the filter of a listed layer and marks it ready. One
   * unlisted meanwhile (docs/SPEC.md 9.8 step 4) is deleted again, by the keys it was made with,
   * and is `BLOOM_NOT_FOUND`: the caller goes on from the list as it is now.
   */
  private async makeLayer(entry: LayerEntry, parameters: FilterParameters): Promise<RedisLayer> {
    const ttlSeconds = this.policy.kind === 'rotating' ? this.layerTtlSeconds(entry) : await this.metaTtlSeconds()
    const layer = await createLayer(this.layerSettings, entry, parameters, { ttlSeconds })
    await this.call(this.client.hset(this.meta, `ready:${entry.id}`, '1'), 'create layer')
    const listed = parseEntries((await this.call(this.client.hget(this.meta, 'layers'), 'create layer')) ?? '')
    if (listed.some((listedEntry) => listedEntry.id === entry.id)) return layer
    await layer.close()
    await layer.shards.deleteAll()
    await this.call(this.client.hdel(this.meta, `ready:${entry.id}`), 'create layer')
    throw new BloomError('BLOOM_NOT_FOUND', `filter "${this.name}": its layer ${layer.name} was unlisted while it was being created`)
  }

  /** The TTL a scalable filter's meta has now (set by setTtl), for a layer created later; undefined for none. */
  private async metaTtlSeconds(): Promise<number | undefined> {
    const ms = Number(await this.call(this.client.pttl(this.meta), 'ttl'))
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : undefined
  }

  /** A rotating layer lives until `keep` windows after its own (plus a grace); exact, as the window's start is at most 2^53 − 1 ms. */
  private layerTtlSeconds(entry: LayerEntry): number {
    const { seconds, keep } = this.policy
    return Math.max(1, Math.ceil((entry.window * seconds * 1000 - this.clock() + WINDOW_GRACE_MS) / 1000) + keep * seconds)
  }
}
