import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkParameters, sameParameters, type LayerEntry, type LayerPolicy, type LayerStorage, type StoredLayer, layerPolicies } from '@bloomkit/core/store'
import { closeDatabase, locationIsNew, openDatabase, removeLocation, type Database } from '../folder/database.js'
import { manifestLocation } from '../folder/stored-kind.js'
import { LayerPool, type PooledLayer } from './layer-pool.js'
import { LevelBitStore } from '../level-bit-store.js'
import type { LevelCreateStoreOptions } from '../options.js'

const { checkPolicyKind } = layerPolicies

const MANIFEST_KEY = 'layered'
const MANIFEST_FORMAT = 1

/**
 * A listed layer. `parameters` (written since issue 21; older manifests lack it) lets a filter of
 * many layers open without opening every layer's LevelDB; each is checked against them when opened.
 */
export type ManifestLayer = LayerEntry & { readonly parameters?: FilterParameters }

/** The manifest: the policy and the layers in order; written whole, in one LevelDB put, before a layer is used and after one is dropped. */
export interface Manifest {
  readonly format: number
  readonly policy: LayerPolicy
  readonly layers: readonly ManifestLayer[]
  /** The id the next layer gets: a folder `L<nextId>` that exists is a layer whose creation a crash cut short. */
  readonly nextId: number
  /** Layers dropped from the list whose folders may not be deleted yet. */
  readonly dropped: readonly number[]
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * A layered filter's storage in one LevelDB folder: each layer an ordinary LevelDB filter in
 * `<folder>/L<id>`, and `<folder>/manifest` listing them with the policy and each layer's count.
 *
 * Crash rules: a layer's folder is created (and its metadata synced) before the manifest lists
 * it, and keys go only into listed layers, so a crash while adding a layer loses nothing that
 * resolved and leaves a folder that opens (the half-made layer is deleted on the next open).
 * Dropped layers are unlisted first and deleted after. Counts are written after each batch; a
 * crash may lose the last batch's count, so that layer may take that many keys more.
 */
export class LevelLayers implements LayerStorage<false> {
  readonly sync = false
  layers: readonly StoredLayer<false>[]
  private nextId: number

  readonly location: string
  readonly policy: LayerPolicy
  private readonly db: Database
  private readonly options: LevelCreateStoreOptions
  private readonly pool: LayerPool

  private constructor(parts: {
    readonly location: string
    readonly db: Database
    readonly policy: LayerPolicy
    readonly options: LevelCreateStoreOptions
    readonly pool: LayerPool
    readonly layers: StoredLayer<false>[]
    readonly nextId: number
  }) {
    this.location = parts.location
    this.db = parts.db
    this.policy = parts.policy
    this.options = parts.options
    this.pool = parts.pool
    this.layers = parts.layers
    this.nextId = parts.nextId
  }

  /** Opens the manifest database of `where` (created when `create`), and runs `body` on it; closes it if `body` throws. */
  static async withManifest<T>(where: string, { create }: { readonly create: boolean }, body: (db: Database) => Promise<T>): Promise<T> {
    const db = await openDatabase(manifestLocation(where), { create })
    try {
      return await body(db)
    } catch (error) {
      await closeDatabase(manifestLocation(where), db)
      throw error
    }
  }

  /**
   * The layers the manifest lists; deletes folders a crash left (a layer being made, layers
   * dropped). Up to the pool's size they are opened now; beyond it (many small layers) only checked
   * to exist, and opened when a call reaches them.
   */
  static async load(where: string, db: Database, manifest: Manifest, options: LevelCreateStoreOptions): Promise<LevelLayers> {
    removeLocation(`${where}/L${manifest.nextId}`)
    for (const id of manifest.dropped) removeLocation(`${where}/L${id}`)
    const pool = new LayerPool(options)
    const layers: StoredLayer<false>[] = []
    try {
      for (const entry of manifest.layers) {
        const folder = `${where}/L${entry.id}`
        const listed = listedParameters(where, entry)
        let store: LevelBitStore | undefined
        if (listed === undefined || !pool.full) {
          store = await LevelBitStore.open(folder, options).catch((error: unknown) => {
            throw layerGone(where, entry.id, error)
          })
          if (listed !== undefined && !sameParameters(listed, store.parameters)) {
            await store.close()
            throw new BloomError('BLOOM_CORRUPT_STORE', `${where}: layer L${entry.id}'s parameters differ from those the layered manifest lists for it`)
          }
        } else if (locationIsNew(folder)) {
          throw layerGone(where, entry.id, undefined)
        }
        const parameters = listed ?? store!.parameters
        // An old manifest (no parameters) past the pool's size: read, then closed until used.
        if (store !== undefined && pool.full) {
          await store.close()
          store = undefined
        }
        const count = await db.get(`count:${entry.id}`)
        layers.push({ entry: { id: entry.id, window: entry.window, index: entry.index, capacity: entry.capacity }, store: pool.layer(folder, parameters, store), count: count === undefined ? 0 : Number(decoder.decode(count)) })
      }
    } catch (error) {
      for (const layer of layers) await layer.store.close()
      throw error
    }
    const storage = new LevelLayers({ location: where, db, policy: manifest.policy, options, pool, layers, nextId: manifest.nextId })
    if (manifest.dropped.length > 0 || manifest.layers.some((entry) => entry.parameters === undefined)) await storage.save([])
    return storage
  }

  async append(entry: Omit<LayerEntry, 'id'>, parameters: FilterParameters): Promise<StoredLayer<false>> {
    const id = this.nextId
    const folder = `${this.location}/L${id}`
    removeLocation(folder) // what a crash left of a layer never listed
    const store = await LevelBitStore.create(folder, parameters, this.options)
    const layer: StoredLayer<false> = { entry: { id, ...entry }, store: this.pool.layer(folder, store.parameters, store), count: 0 }
    this.layers = [...this.layers, layer]
    this.nextId++
    await this.save([])
    return layer
  }

  async drop(gone: readonly StoredLayer<false>[]): Promise<void> {
    const ids = gone.map((layer) => layer.entry.id)
    this.layers = this.layers.filter((layer) => !ids.includes(layer.entry.id))
    await this.save(ids)
    for (const layer of gone) {
      await layer.store.close()
      removeLocation(`${this.location}/L${layer.entry.id}`)
    }
    await this.save([])
  }

  reserve(_layer: StoredLayer<false>, want: number): Promise<number> {
    return Promise.resolve(want)
  }

  async settle(layer: StoredLayer<false>, _reserved: number, added: number): Promise<void> {
    layer.count += added
    await this.db.put(`count:${layer.entry.id}`, encoder.encode(String(layer.count)))
  }

  /** Writes each layer's changed pages. */
  async flush(): Promise<void> {
    for (const layer of this.layers) await (layer.store as PooledLayer).flush()
  }

  async close(): Promise<void> {
    for (const layer of this.layers) await layer.store.close()
    await closeDatabase(manifestLocation(this.location), this.db)
  }

  private async save(dropped: number[]): Promise<void> {
    const layers = this.layers.map((layer) => ({ ...layer.entry, parameters: layer.store.parameters }))
    await writeManifest(this.db, { format: MANIFEST_FORMAT, policy: this.policy, layers, nextId: this.nextId, dropped })
  }
}

/** A new manifest for `policy` with these layers (an import's) or none. */
export function newManifest(policy: LayerPolicy, layers: readonly ManifestLayer[] = []): Manifest {
  return { format: MANIFEST_FORMAT, policy, layers, nextId: layers.length + 1, dropped: [] }
}

export async function readManifest(db: Database, where: string): Promise<Manifest | undefined> {
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
  checkPolicyKind(manifest.policy?.kind, `${where}: the layered manifest`)
  return manifest
}

export function writeManifest(db: Database, manifest: Manifest, counts: ReadonlyMap<number, number> = new Map()): Promise<void> {
  if (counts.size === 0) return db.put(MANIFEST_KEY, encoder.encode(JSON.stringify(manifest)), { sync: true })
  return db.batch(
    [
      { type: 'put', key: MANIFEST_KEY, value: encoder.encode(JSON.stringify(manifest)) },
      ...[...counts].map(([id, count]) => ({ type: 'put' as const, key: `count:${id}`, value: encoder.encode(String(count)) })),
    ],
    { sync: true },
  )
}

/** The parameters the manifest lists for a layer, checked; undefined in a manifest written before they were. */
function listedParameters(where: string, entry: ManifestLayer): FilterParameters | undefined {
  if (entry.parameters === undefined) return undefined
  try {
    return checkParameters(entry.parameters)
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${where}: the layered manifest lists unreadable parameters for layer L${entry.id}`, { cause: error })
  }
}

/** `BLOOM_DATA_LOST` for a listed layer whose folder is gone (other errors as they are). */
function layerGone(where: string, id: number, error: unknown): unknown {
  if (error === undefined || (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND')) {
    return new BloomError('BLOOM_DATA_LOST', `${where}: listed layer L${id} is gone; import a snapshot or create the filter anew`, { cause: error })
  }
  return error
}
