import { BloomError, LayeredFilter, type LayeredOptions, type RotatingOptions } from '@bloomkit/core'
import { createKeyHasher, decodeLayeredSnapshot, layerPolicyOf, layerSnapshotOf, snapshotLayerEntries, type LayerPolicy } from '@bloomkit/core/store'
import { canonicalLocation, type Database } from './database.js'
import { LevelBitStore } from './level-bit-store.js'
import { LevelLayers, newManifest, readManifest, writeManifest, type Manifest } from './level-layers.js'
import type { LevelCreateStoreOptions, LevelStoreOptions } from './options.js'

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
    const policy = layerPolicyOf(options)
    const where = canonicalLocation(location)
    return LevelLayers.withManifest(where, true, async (db) => {
      const existing = await readManifest(db, where)
      if (existing !== undefined && JSON.stringify(existing.policy) !== JSON.stringify(policy)) {
        throw new BloomError('BLOOM_INCOMPATIBLE', `${where} holds a layered filter with another policy: ${JSON.stringify(existing.policy)}, asked for ${JSON.stringify(policy)}`)
      }
      const manifest = existing ?? newManifest(policy)
      if (existing === undefined) await writeManifest(db, manifest)
      return LayeredLevelFilter.load(where, db, manifest, options, (options as RotatingOptions).clock)
    })
  }

  /**
   * The layered filter in `location`. Deletes the folder of a layer whose creation a crash cut short.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_STORE`, `BLOOM_DATA_LOST` (a listed layer's folder is gone),
   *   `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(location: string, options: LayeredLevelOpenOptions = {}): Promise<LayeredLevelFilter> {
    const where = canonicalLocation(location)
    const opened = LevelLayers.withManifest(where, false, async (db) => {
      const manifest = await readManifest(db, where)
      if (manifest === undefined) throw new BloomError('BLOOM_NOT_FOUND', `${where}: no layered filter here`)
      return LayeredLevelFilter.load(where, db, manifest, options, options.clock)
    })
    return opened.catch((error: unknown) => {
      if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND' && !error.message.includes('no layered filter')) {
        throw new BloomError('BLOOM_NOT_FOUND', `${where}: no layered filter here (for a fixed filter's folder, use LevelBloomFilter.open)`, { cause: error })
      }
      throw error
    })
  }

  /**
   * A new layered filter in `location` (a new folder) from a layered snapshot (format version 2):
   * each layer is imported (and checked) into its folder before the manifest lists it.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INCOMPATIBLE` (the folder holds a filter), `BLOOM_LOCKED`.
   */
  static async import(location: string, snapshot: Uint8Array, options: LevelCreateStoreOptions & { clock?: () => number } = {}): Promise<LayeredLevelFilter> {
    const { policy, layers } = decodeLayeredSnapshot(snapshot)
    const where = canonicalLocation(location)
    return LevelLayers.withManifest(where, true, async (db) => {
      if ((await readManifest(db, where)) !== undefined) throw new BloomError('BLOOM_INCOMPATIBLE', `import: ${where} already holds a layered filter`)
      const entries = snapshotLayerEntries(policy, layers)
      for (const [i, layer] of layers.entries()) {
        const store = await LevelBitStore.import(`${where}/L${entries[i].id}`, layerSnapshotOf(snapshot, layer), options)
        await store.close()
      }
      const manifest = newManifest(policy, entries)
      await writeManifest(db, manifest, new Map(layers.map((layer, i) => [entries[i].id, layer.count])))
      return LayeredLevelFilter.load(where, db, manifest, options, options.clock)
    })
  }

  private static async load(where: string, db: Database, manifest: Manifest, options: LevelCreateStoreOptions, clock: (() => number) | undefined): Promise<LayeredLevelFilter> {
    const policy: LayerPolicy = manifest.policy
    const storage = await LevelLayers.load(where, db, manifest, options)
    return new LayeredLevelFilter(policy, storage, await createKeyHasher(policy.seed), { clock })
  }

  /** Writes each layer's changed pages (see `LevelBloomFilter.flush`). */
  async flush(): Promise<void> {
    this.checkOpen()
    await (this.storage as LevelLayers).flush()
  }
}
