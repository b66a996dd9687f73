import { BloomError, LayeredFilter, type LayeredOptions, type RotatingOptions } from '@bloomkit/core'
import { layeredFormat, optionChecks, type LayerPolicy, layerPolicies } from '@bloomkit/core/store'
import { canonicalLocation, closeDatabase, locationIsNew, nodeModules, openDatabase, removeLocation, type Database } from '../folder/database.js'
import { storeError } from '../errors.js'
import { filterOver } from '../filter-over.js'
import { manifestLocation } from '../folder/stored-kind.js'
import { LevelBitStore } from '../level-bit-store.js'
import { LevelLayers, newManifest, readManifest, writeManifest, type Manifest } from './level-layers.js'
import { checkCacheForNewPages, checkLevelOptions, type LevelCreateStoreOptions, type LevelStoreOptions } from '../options.js'

const { layerPolicyOf } = layerPolicies

const { decodeLayeredSnapshot, layerSnapshotOf, snapshotLayerEntries } = layeredFormat

/** Options of {@link LayeredLevelFilter.create}: a scalable (`growth`) or rotating (`window`) policy, and each layer's store options. */
export type LayeredLevelOptions = LayeredOptions & LevelCreateStoreOptions

/** Options of {@link LayeredLevelFilter.open}: each layer's store options, and the clock of a rotating filter. */
export type LayeredLevelOpenOptions = LevelStoreOptions & { readonly clock?: () => number }

/**
 * A layered Bloom filter in one LevelDB folder (IndexedDB names in browsers): core's
 * {@link LayeredFilter} over {@link LevelLayers}, each layer an ordinary LevelDB filter in
 * `<folder>/L<id>` listed by `<folder>/manifest`. Every method returns a Promise. Crash rules:
 * see `level-layers.ts`.
 */
export class LayeredLevelFilter extends LayeredFilter<false> {
  /** The folder (absolute path) or, in browsers, the IndexedDB name prefix. */
  get location(): string {
    return (this.storage as LevelLayers).location
  }

  /**
   * A new layered filter in `location`, or the one there if it has the same policy. Prefer
   * `LevelBloomFilter.create`, which returns one when the options have `growth` or `window`.
   * `cacheBytes` and the other store options apply to each layer.
   * @throws BloomError `BLOOM_INVALID_PARAMETER`, `BLOOM_INCOMPATIBLE` (another policy), `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(location: string, options: LayeredLevelOptions): Promise<LayeredLevelFilter> {
    checkLevelOptions('LayeredLevelFilter.create', options)
    optionChecks.checkCreateKind(options, 'layered')
    checkCacheForNewPages(options)
    const policy = layerPolicyOf(options)
    const where = canonicalLocation(location)
    return LevelLayers.withManifest(where, { create: true }, async (db) => {
      const existing = await readManifest(db, where)
      // Without a seed of the caller's, the stored filter keeps its own.
      const comparable = (p: LayerPolicy) => JSON.stringify(options.seed === undefined ? { ...p, seed: 0 } : p)
      if (existing !== undefined && comparable(existing.policy) !== comparable(policy)) {
        throw new BloomError('BLOOM_INCOMPATIBLE', `${where} holds a layered filter with another policy: ${JSON.stringify(existing.policy)}, asked for ${JSON.stringify(policy)}`)
      }
      const manifest = existing ?? newManifest(policy)
      if (existing === undefined) await writeManifest(db, manifest)
      return loadFilter(where, db, manifest, options, (options as RotatingOptions).clock)
    })
  }

  /**
   * The layered filter in `location`. Deletes the folder of a layer whose creation a crash cut short.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_STORE`, `BLOOM_DATA_LOST` (a listed layer's folder is gone),
   *   `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(location: string, options: LayeredLevelOpenOptions = {}): Promise<LayeredLevelFilter> {
    checkLevelOptions('LayeredLevelFilter.open', options)
    const where = canonicalLocation(location)
    const opened = LevelLayers.withManifest(where, { create: false }, (db) => loadListed(where, db, options))
    return opened.catch((error: unknown) => {
      if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND' && !error.message.includes('no layered filter')) {
        throw new BloomError('BLOOM_NOT_FOUND', `${where}: no layered filter here (for a fixed filter's folder, use LevelBloomFilter.open)`, { cause: error })
      }
      throw error
    })
  }

  /**
   * A new layered filter in `location` (a new or empty folder) from a layered snapshot (format
   * version 2), checked whole before anything is written. In Node the layers are imported one at a
   * time (one LevelDB open at once) into a staging folder beside the target,
   * `.<name>.bloomkit-import`, which is renamed to `location` only when complete: a failed or killed
   * import leaves no folder under the target's name, and the next import there clears what it left.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INCOMPATIBLE` (the
   *   folder holds something), `BLOOM_LOCKED` (another import there is running), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async import(location: string, snapshot: Uint8Array, options: LevelCreateStoreOptions & { clock?: () => number } = {}): Promise<LayeredLevelFilter> {
    checkLevelOptions('LayeredLevelFilter.import', options)
    checkCacheForNewPages(options)
    const { policy, layers } = decodeLayeredSnapshot(snapshot)
    const where = canonicalLocation(location)
    const entries = snapshotLayerEntries(policy, layers).map((entry, i) => ({ ...entry, parameters: layers[i].parameters }))
    const counts = new Map(layers.map((layer, i) => [entries[i].id, layer.count]))
    const node = nodeModules()
    if (node === undefined) {
      // Browsers: IndexedDB names cannot be renamed, so the layers are made in place, as LevelDB's own import does.
      return LevelLayers.withManifest(where, { create: true }, async (db) => {
        if ((await readManifest(db, where)) !== undefined) throw new BloomError('BLOOM_INCOMPATIBLE', `import: ${where} already holds a layered filter`)
        for (const [i, layer] of layers.entries()) await importLayer(`${where}/L${entries[i].id}`, layerSnapshotOf(snapshot, layer), options)
        const manifest = newManifest(policy, entries)
        await writeManifest(db, manifest, counts)
        return loadFilter(where, db, manifest, options, options.clock)
      })
    }
    if (!locationIsNew(where)) throw new BloomError('BLOOM_INCOMPATIBLE', `import: ${where} already holds a filter or other files; import into a new or empty folder`)
    const staging = node.path.join(node.path.resolve(where, '..'), `.${node.path.basename(where)}.bloomkit-import`)
    await clearStaging(staging)
    try {
      await LevelLayers.withManifest(staging, { create: true }, async (db) => {
        for (const [i, layer] of layers.entries()) await importLayer(`${staging}/L${entries[i].id}`, layerSnapshotOf(snapshot, layer), options)
        await writeManifest(db, newManifest(policy, entries), counts)
        await closeDatabase(manifestLocation(staging), db)
      })
      // An empty folder under the target's name is replaced; anything else there makes this fail.
      if (node.fs.statSync(where, { throwIfNoEntry: false }) !== undefined) node.fs.rmdirSync(where)
      node.fs.renameSync(staging, where)
    } catch (error) {
      removeLocation(staging)
      throw storeError(where, 'cannot be imported into', error)
    }
    return LayeredLevelFilter.open(where, options)
  }

  /** Writes each layer's changed pages (see `LevelBloomFilter.flush`). */
  async flush(): Promise<void> {
    this.checkOpen()
    await (this.storage as LevelLayers).flush()
  }
}

/**
 * The layered filter over its manifest database, open (`LevelBloomFilter.open` read the folder's
 * kind first: stored-kind.ts), without a second open; closes the database if it cannot. Package-internal.
 * @throws BloomError as {@link LayeredLevelFilter.open}.
 */
export async function layeredFilterInFolder(where: string, db: Database, options: LayeredLevelOpenOptions): Promise<LayeredLevelFilter> {
  try {
    return await loadListed(where, db, options)
  } catch (error) {
    await closeDatabase(manifestLocation(where), db)
    throw error
  }
}

/** The filter the manifest in `db` lists; `BLOOM_NOT_FOUND` when it lists none. */
async function loadListed(where: string, db: Database, options: LayeredLevelOpenOptions): Promise<LayeredLevelFilter> {
  const manifest = await readManifest(db, where)
  if (manifest === undefined) throw new BloomError('BLOOM_NOT_FOUND', `${where}: no layered filter here`)
  return loadFilter(where, db, manifest, options, options.clock)
}

/** The filter over `manifest`'s layers, the manifest's database open in `db`. */
async function loadFilter(where: string, db: Database, manifest: Manifest, options: LevelCreateStoreOptions, clock: (() => number) | undefined): Promise<LayeredLevelFilter> {
  const policy: LayerPolicy = manifest.policy
  const storage = await LevelLayers.load(where, db, manifest, options)
  return filterOver(storage, policy.seed, (hasher) => new LayeredLevelFilter(policy, storage, hasher, { clock }))
}

/** Imports one layer's snapshot into its folder and closes it, so that one layer's LevelDB is open at a time. */
async function importLayer(folder: string, snapshot: Uint8Array, options: LevelCreateStoreOptions): Promise<void> {
  const store = await LevelBitStore.import(folder, snapshot, options)
  await store.close()
}

/**
 * Deletes what a failed or killed import left in `staging`. Its manifest database is open while an
 * import runs, so an import still running here is found by LevelDB's lock and refused, not deleted.
 * @throws BloomError `BLOOM_LOCKED`.
 */
async function clearStaging(staging: string): Promise<void> {
  if (locationIsNew(staging)) {
    removeLocation(staging)
    return
  }
  try {
    await closeDatabase(manifestLocation(staging), await openDatabase(manifestLocation(staging), { create: false }))
  } catch (error) {
    if (error instanceof BloomError && error.code === 'BLOOM_LOCKED') {
      throw new BloomError('BLOOM_LOCKED', `${staging}: another import into this location is running`, { cause: error })
    }
  }
  removeLocation(staging)
}
