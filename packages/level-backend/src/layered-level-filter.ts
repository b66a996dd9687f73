import { BloomError, BloomFilter, type BloomKey, type FilterParameters, type LayeredOptions, type LayerInfo, type RotatingOptions } from '@bloomkit/core'
import {
  compoundErrorRate,
  createKeyHasher,
  decodeLayeredSnapshot,
  encodeLayeredSnapshot,
  KeyHasher,
  layerCapacity,
  layeredMergeRefused,
  noJsonForm,
  layerErrorRate,
  layerParameters,
  layerPolicyOf,
  hashPairs,
  keyBatches,
  layerBatch,
  windowOf,
  type LayerPolicy,
} from '@bloomkit/core/store'
import { canonicalLocation, closeDatabase, openDatabase, removeLocation, type Database } from './database.js'
import { LevelBitStore } from './level-bit-store.js'
import type { LevelCreateStoreOptions, LevelStoreOptions } from './options.js'

/** Keys hashed per store call by addMany/hasMany. */
const BATCH_KEYS = 16_384
const MANIFEST_KEY = 'layered'
const MANIFEST_FORMAT = 1

/** Options of {@link LayeredLevelFilter.create}: a scalable (`growth`) or rotating (`window`) policy, and each layer's store options. */
export type LayeredLevelOptions = LayeredOptions & LevelCreateStoreOptions

/** Options of {@link LayeredLevelFilter.open}: each layer's store options, and the clock of a rotating filter. */
export type LayeredLevelOpenOptions = LevelStoreOptions & { readonly clock?: () => number }

/** The manifest: the policy and the layers in order; written whole, in one LevelDB put, before a layer is used and after one is dropped. */
interface Manifest {
  readonly format: number
  readonly policy: LayerPolicy
  readonly layers: readonly { readonly id: number; readonly window: number; readonly index: number; readonly capacity: number }[]
  /** The id the next layer gets: a folder `L<nextId>` that exists is a layer whose creation a crash cut short. */
  readonly nextId: number
  /** Layers dropped from the list whose folders may not be deleted yet. */
  readonly dropped: readonly number[]
}

interface Layer {
  readonly id: number
  readonly window: number
  readonly index: number
  readonly capacity: number
  count: number
  readonly filter: BloomFilter<false>
  readonly store: LevelBitStore
  readonly parameters: FilterParameters
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * `BLOOM_INCOMPATIBLE` if `location` holds a layered filter (its manifest opens), so that a fixed
 * filter's `open` says what is there rather than "not a LevelDB folder"; otherwise nothing.
 */
export async function refuseLayered(location: string): Promise<void> {
  const manifest = `${canonicalLocation(location)}/manifest`
  let db: Database
  try {
    db = await openDatabase(manifest, false)
  } catch {
    return
  }
  await closeDatabase(manifest, db)
  throw new BloomError('BLOOM_INCOMPATIBLE', `${canonicalLocation(location)} holds a layered filter: open it with LayeredLevelFilter.open`)
}

/**
 * A layered Bloom filter in one LevelDB folder (IndexedDB names in browsers): each layer is an
 * ordinary LevelDB filter in `<folder>/L<id>`, and `<folder>/manifest` lists them with the policy
 * and each layer's count. Every method returns a Promise.
 *
 * Crash safety: a layer's folder is created (and its metadata synced) before the manifest lists
 * it, and keys go only into listed layers, so a crash while adding a layer loses nothing that
 * resolved (each layer keeps its own write-ahead log) and leaves a filter that opens: the
 * half-made layer's folder is deleted on the next open. Counts are written after each batch; a
 * crash may lose the last batch's count, so that layer may take that many keys more.
 */
export class LayeredLevelFilter {
  /** What decides the layers. */
  readonly policy: LayerPolicy
  /** The folder (absolute path) or, in browsers, the IndexedDB name prefix. */
  readonly location: string
  private readonly manifestDb: Database
  private readonly hasher: KeyHasher
  private readonly clock: () => number
  private readonly options: LevelCreateStoreOptions
  private live: Layer[]
  private nextId: number
  private window = 0
  private closed = false

  private constructor(location: string, manifestDb: Database, policy: LayerPolicy, hasher: KeyHasher, clock: () => number, options: LevelCreateStoreOptions, layers: Layer[], nextId: number) {
    this.location = location
    this.manifestDb = manifestDb
    this.policy = policy
    this.hasher = hasher
    this.clock = clock
    this.options = options
    this.live = layers
    this.nextId = nextId
    this.window = layers.length === 0 ? 0 : layers[layers.length - 1].window
  }

  /**
   * A new layered filter in `location`, or the one there if it has the same policy. Prefer
   * `LevelBloomFilter.create`, which returns one when the options have `growth` or `window`.
   * `cacheBytes` and the other store options apply to each layer.
   * @throws BloomError `BLOOM_INVALID_PARAMETER`, `BLOOM_INCOMPATIBLE` (another policy), `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(location: string, options: LayeredLevelOptions): Promise<LayeredLevelFilter> {
    const policy = layerPolicyOf(options)
    const where = canonicalLocation(location)
    const db = await openDatabase(`${where}/manifest`, true)
    try {
      const existing = await readManifest(db, where)
      if (existing !== undefined && JSON.stringify(existing.policy) !== JSON.stringify(policy)) {
        throw new BloomError('BLOOM_INCOMPATIBLE', `${where} holds a layered filter with another policy: ${JSON.stringify(existing.policy)}, asked for ${JSON.stringify(policy)}`)
      }
      const manifest = existing ?? { format: MANIFEST_FORMAT, policy, layers: [], nextId: 1, dropped: [] }
      if (existing === undefined) await writeManifest(db, manifest)
      return await LayeredLevelFilter.load(where, db, manifest, options, (options as RotatingOptions).clock)
    } catch (error) {
      await closeDatabase(`${where}/manifest`, db)
      throw error
    }
  }

  /**
   * The layered filter in `location`. Deletes the folder of a layer whose creation a crash cut short.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_STORE`, `BLOOM_DATA_LOST` (a listed layer's folder is gone),
   *   `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(location: string, options: LayeredLevelOpenOptions = {}): Promise<LayeredLevelFilter> {
    const where = canonicalLocation(location)
    const db = await openDatabase(`${where}/manifest`, false).catch((error: unknown) => {
      if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') {
        throw new BloomError('BLOOM_NOT_FOUND', `${where}: no layered filter here (for a fixed filter's folder, use LevelBloomFilter.open)`, { cause: error })
      }
      throw error
    })
    try {
      const manifest = await readManifest(db, where)
      if (manifest === undefined) throw new BloomError('BLOOM_NOT_FOUND', `${where}: no layered filter here`)
      return await LayeredLevelFilter.load(where, db, manifest, options, options.clock)
    } catch (error) {
      await closeDatabase(`${where}/manifest`, db)
      throw error
    }
  }

  /**
   * A new layered filter in `location` (a new folder) from a layered snapshot (format version 2):
   * each layer is imported (and checked) into its folder before the manifest lists it.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INCOMPATIBLE` (the folder holds a filter), `BLOOM_LOCKED`.
   */
  static async import(location: string, snapshot: Uint8Array, options: LevelCreateStoreOptions & { clock?: () => number } = {}): Promise<LayeredLevelFilter> {
    const { policy, layers } = decodeLayeredSnapshot(snapshot)
    const where = canonicalLocation(location)
    const db = await openDatabase(`${where}/manifest`, true)
    try {
      if ((await readManifest(db, where)) !== undefined) throw new BloomError('BLOOM_INCOMPATIBLE', `import: ${where} already holds a layered filter`)
      const entries: Manifest['layers'][number][] = []
      for (const [i, layer] of layers.entries()) {
        const index = i > 0 && layers[i - 1].window === layer.window ? entries[i - 1].index + 1 : 0
        const start = layer.payload.byteOffset - snapshot.byteOffset - 40
        const store = await LevelBitStore.import(`${where}/L${i + 1}`, snapshot.subarray(start, start + 40 + layer.payload.length + 4), options)
        await store.close()
        entries.push({ id: i + 1, window: layer.window, index, capacity: layerCapacity(policy, index) })
      }
      const manifest: Manifest = { format: MANIFEST_FORMAT, policy, layers: entries, nextId: layers.length + 1, dropped: [] }
      await db.batch([
        { type: 'put', key: MANIFEST_KEY, value: encoder.encode(JSON.stringify(manifest)) },
        ...layers.map((layer, i) => ({ type: 'put' as const, key: `count:${i + 1}`, value: encoder.encode(String(layer.count)) })),
      ], { sync: true })
      return await LayeredLevelFilter.load(where, db, manifest, options, options.clock)
    } catch (error) {
      await closeDatabase(`${where}/manifest`, db)
      throw error
    }
  }

  private static async load(where: string, db: Database, manifest: Manifest, options: LevelCreateStoreOptions, clock: (() => number) | undefined): Promise<LayeredLevelFilter> {
    // Folders a crash left: a layer being created (not listed yet) and layers dropped but not deleted.
    removeLocation(`${where}/L${manifest.nextId}`)
    for (const id of manifest.dropped) removeLocation(`${where}/L${id}`)
    const hasher = await createKeyHasher(manifest.policy.seed)
    const layers: Layer[] = []
    try {
      for (const entry of manifest.layers) {
        const store = await LevelBitStore.open(`${where}/L${entry.id}`, options).catch((error: unknown) => {
          if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') {
            throw new BloomError('BLOOM_DATA_LOST', `${where}: listed layer L${entry.id} is gone; import a snapshot or create the filter anew`, { cause: error })
          }
          throw error
        })
        const count = await db.get(`count:${entry.id}`)
        layers.push(makeLayer(entry, store, hasher, count === undefined ? 0 : Number(decoder.decode(count))))
      }
    } catch (error) {
      for (const layer of layers) await layer.store.close()
      throw error
    }
    const filter = new LayeredLevelFilter(where, db, manifest.policy, hasher, clock ?? Date.now, options, layers, manifest.nextId)
    if (manifest.dropped.length > 0) await filter.save([])
    return filter
  }

  /** Whether methods return plain values: never, on LevelDB. */
  get isSync(): false {
    return false
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed
  }

  /** Adds a key: true if it was new. See {@link addMany}. */
  async add(key: BloomKey): Promise<boolean> {
    return (await this.addMany([key]))[0]
  }

  /** Whether any live layer may hold the key. */
  async has(key: BloomKey): Promise<boolean> {
    return (await this.hasMany([key]))[0]
  }

  /** Checks keys: each is hashed once, and every live layer is asked in one call per batch. */
  async hasMany(keys: Iterable<BloomKey>): Promise<boolean[]> {
    this.checkOpen()
    await this.advance()
    const results: boolean[] = []
    for (const batch of keyBatches(keys, BATCH_KEYS)) {
      const { found } = await this.test(batch)
      for (let i = 0; i < batch.length; i++) results.push(found[i] === 1)
    }
    return results
  }

  /**
   * Adds keys: a key any live layer holds answers false and writes nothing; the others go into the
   * newest layer (of the current window), a new layer being added first when that one is full.
   */
  async addMany(keys: Iterable<BloomKey>): Promise<boolean[]> {
    this.checkOpen()
    await this.advance()
    const results: boolean[] = []
    for (const batch of keyBatches(keys, BATCH_KEYS)) {
      const { found, pairs } = await this.test(batch)
      const answers = new Array<boolean>(batch.length).fill(false)
      let pending = batch.map((_, i) => i).filter((i) => found[i] === 0)
      let previous: Layer | undefined
      while (pending.length > 0) {
        const layer = await this.writable()
        if (previous !== undefined && previous !== layer) {
          // Keys are judged one at a time (docs/SPEC.md section 8): those left over when a layer
          // filled are checked again against it, since keys before them in the batch went into it.
          pending = await stillNew(previous.store, previous.parameters, pairs, pending)
          if (pending.length === 0) break
        }
        previous = layer
        const taking = this.policy.growth === 0 ? pending : pending.slice(0, Math.max(1, layer.capacity - layer.count))
        pending = pending.slice(taking.length)
        const positions = layerBatch(layer.parameters, pairs, taking)
        const out = new Uint8Array(taking.length)
        await layer.store.setBits(positions, out)
        taking.forEach((i, slot) => {
          answers[i] = out[slot] === 1
          layer.count += out[slot]
        })
        await this.manifestDb.put(`count:${layer.id}`, encoder.encode(String(layer.count)))
      }
      results.push(...answers)
    }
    return results
  }

  /** Keys that were new when added, over the live layers. */
  async estimateCount(): Promise<number> {
    return (await this.layers()).reduce((sum, layer) => sum + layer.count, 0)
  }

  /** The false-positive probability of a `has` now: 1 − Π(1 − rate_i) over the live layers' current rates. */
  async errorRate(): Promise<number> {
    this.checkOpen()
    await this.advance()
    return compoundErrorRate(await Promise.all(this.live.map((layer) => layer.filter.errorRate())))
  }

  /** Each live layer, oldest first: capacity, count, the error rate it is sized for, parameters, window. */
  async layers(): Promise<LayerInfo[]> {
    this.checkOpen()
    await this.advance()
    return this.live.map((layer) => ({
      capacity: layer.capacity,
      count: layer.count,
      errorRate: layerErrorRate(this.policy, layer.index),
      parameters: layer.parameters,
      window: layer.window,
    }))
  }

  /** The layered snapshot (docs/SPEC.md, section 8) of the live layers. */
  async export(): Promise<Uint8Array> {
    this.checkOpen()
    await this.advance()
    const snapshots: Uint8Array[] = []
    for (const layer of this.live) snapshots.push(await layer.filter.export())
    return encodeLayeredSnapshot(this.policy, this.live.map((layer, i) => ({ window: layer.window, count: layer.count, snapshot: snapshots[i] })))
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

  /** Drops every layer (their folders are deleted): the filter is as new. */
  async clear(): Promise<void> {
    this.checkOpen()
    await this.drop(this.live)
  }

  /** Writes each layer's changed pages (see `LevelBloomFilter.flush`). */
  async flush(): Promise<void> {
    this.checkOpen()
    for (const layer of this.live) await layer.store.flush()
  }

  /** Closes every layer and the manifest; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const layer of this.live) await layer.filter.close()
    await closeDatabase(`${this.location}/manifest`, this.manifestDb)
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the filter is closed')
  }

  /** Moves to the clock's window (rotating) and drops layers of windows that have passed. */
  private async advance(): Promise<void> {
    if (this.policy.kind !== 'rotating') return
    const window = windowOf(this.policy, this.clock())
    if (window <= this.window && this.live.length > 0) return
    this.window = Math.max(this.window, window)
    const oldest = this.window - this.policy.keep + 1
    const gone = this.live.filter((layer) => layer.window < oldest)
    if (gone.length > 0) await this.drop(gone)
  }

  /** Unlists `gone`, then closes and deletes their folders (a crash in between leaves them in `dropped`, deleted on open). */
  private async drop(gone: Layer[]): Promise<void> {
    const ids = gone.map((layer) => layer.id)
    this.live = this.live.filter((layer) => !ids.includes(layer.id))
    await this.save(ids)
    for (const layer of gone) {
      await layer.filter.close()
      removeLocation(`${this.location}/L${layer.id}`)
    }
    await this.save([])
  }

  private async save(dropped: number[]): Promise<void> {
    await writeManifest(this.manifestDb, {
      format: MANIFEST_FORMAT,
      policy: this.policy,
      layers: this.live.map(({ id, window, index, capacity }) => ({ id, window, index, capacity })),
      nextId: this.nextId,
      dropped,
    })
  }

  /** The layer new keys go into now, adding one (its folder first, then the manifest) when needed. */
  private async writable(): Promise<Layer> {
    const window = this.policy.kind === 'rotating' ? this.window : 0
    const newest = this.live[this.live.length - 1]
    const sameWindow = newest !== undefined && newest.window === window
    if (sameWindow && (this.policy.growth === 0 || newest.count < newest.capacity)) return newest
    const index = sameWindow ? newest.index + 1 : 0
    const entry = { id: this.nextId, window, index, capacity: layerCapacity(this.policy, index) }
    const folder = `${this.location}/L${entry.id}`
    removeLocation(folder) // what a crash left of a layer never listed
    const store = await LevelBitStore.create(folder, layerParameters(this.policy, index), this.options)
    const layer = makeLayer(entry, store, this.hasher, 0)
    this.live.push(layer)
    this.nextId++
    await this.save([])
    return layer
  }

  /** found[i] = 1 where any live layer holds key i; each key hashed once, every layer asked at once. */
  private async test(keys: BloomKey[]): Promise<{ found: Uint8Array; pairs: Uint32Array }> {
    const found = new Uint8Array(keys.length)
    const pairs = hashPairs(this.hasher, keys)
    const answers = await Promise.all(
      this.live.map(async (layer) => {
        const batch = layerBatch(layer.parameters, pairs)
        const out = new Uint8Array(keys.length)
        await layer.store.testBits(batch, out)
        return out
      }),
    )
    for (const out of answers) for (let i = 0; i < keys.length; i++) found[i] |= out[i]
    return { found, pairs }
  }
}

function makeLayer(entry: Manifest['layers'][number], store: LevelBitStore, hasher: KeyHasher, count: number): Layer {
  const parameters = store.parameters
  return { ...entry, count, store, filter: new BloomFilter(store, hasher), parameters }
}


async function readManifest(db: Database, where: string): Promise<Manifest | undefined> {
  const bytes = await db.get(MANIFEST_KEY)
  if (bytes === undefined) return undefined
  let manifest: Manifest
  try {
    manifest = JSON.parse(decoder.decode(bytes)) as Manifest
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${where}: the layered manifest is not readable`, { cause: error })
  }
  if (manifest.format !== MANIFEST_FORMAT) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${where}: layered manifest format ${manifest.format}; this release reads ${MANIFEST_FORMAT}`)
  }
  return manifest
}

function writeManifest(db: Database, manifest: Manifest): Promise<void> {
  return db.put(MANIFEST_KEY, encoder.encode(JSON.stringify(manifest)), { sync: true })
}

/** The keys of `pending` (indexes into the batch's hash pairs) that `store`'s layer does not hold. */
async function stillNew(store: LevelBitStore, parameters: FilterParameters, pairs: Uint32Array, pending: number[]): Promise<number[]> {
  const out = new Uint8Array(pending.length)
  await store.testBits(layerBatch(parameters, pairs, pending), out)
  return pending.filter((_, slot) => out[slot] === 0)
}
