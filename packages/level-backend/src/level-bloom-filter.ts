import { BloomError, BloomFilter, type SizingOptions } from '@bloomkit/core'
import { createKeyHasher, isLayeredOptions, newFilterParameters } from '@bloomkit/core/store'
import { LayeredLevelFilter, type LayeredLevelOptions } from './layered-level-filter.js'
import { refuseLayered } from './level-layers.js'
import type { SnapshotSource } from './import.js'
import { CountingLevelFilter } from './counting-level-filter.js'
import { canonicalLocation, closeDatabase, openDatabase } from './database.js'
import { LevelBitStore } from './level-bit-store.js'
import { COUNTING_META_KEY } from './level-counter-store.js'
import type { LevelCreateStoreOptions, LevelStoreOptions } from './options.js'

/** Options of {@link LevelBloomFilter.create}: sizing (core's `SizingOptions`) plus the store's. */
export interface LevelCreateOptions extends SizingOptions, LevelCreateStoreOptions {}

/** Options of {@link LevelBloomFilter.open}: how this process uses the folder; nothing here is stored. */
export type LevelOpenOptions = LevelStoreOptions

/** Options of {@link LevelBloomFilter.import}. */
export type LevelImportOptions = LevelCreateStoreOptions

/**
 * A Bloom filter in a LevelDB folder (IndexedDB in browsers): durable across restarts, holding at
 * most `cacheBytes` of its bits in memory. Every method returns a Promise.
 *
 * @example
 * const seen = await LevelBloomFilter.create('./data/seen-urls', { capacity: 50_000_000, errorRate: 0.001 })
 * await seen.addMany(urls)
 * await seen.close()
 * const again = await LevelBloomFilter.open('./data/seen-urls')
 */
export class LevelBloomFilter extends BloomFilter<false> {
  private readonly level: LevelBitStore

  /**
   * A new, empty filter in `location` (a folder, created with its parents if missing; an IndexedDB
   * name in browsers) sized for `capacity` keys at `errorRate`. If the folder already holds a filter
   * with the same parameters, that filter is opened as it is. With `growth` or `window`, a
   * {@link LayeredLevelFilter} that grows or forgets.
   * @throws BloomError `BLOOM_INVALID_PARAMETER`, `BLOOM_INCOMPATIBLE` (the folder holds a filter with
   *   other parameters), `BLOOM_CORRUPT_STORE` (it holds something else, or is damaged), `BLOOM_DATA_LOST`
   *   (LevelDB lost the filter's records there), `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static create(location: string, options: LevelCreateOptions & { readonly counting: true }): Promise<CountingLevelFilter>
  static create(location: string, options: LayeredLevelOptions): Promise<LayeredLevelFilter>
  static create(location: string, options: LevelCreateOptions): Promise<LevelBloomFilter>
  static async create(
    location: string,
    options: LevelCreateOptions | LayeredLevelOptions | (LevelCreateOptions & { readonly counting: true }),
  ): Promise<LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter> {
    // With `counting: true`, a counting filter (counting-level-filter.ts); not layered.
    if ((options as { counting?: unknown } | undefined)?.counting === true) {
      if (isLayeredOptions(options)) {
        throw new BloomError(
          'BLOOM_INVALID_PARAMETER',
          'counting: a counting filter cannot also grow or rotate (growth, window): removing a key would have to find the layer that counted it, and a key added again lands in another',
        )
      }
      return CountingLevelFilter.create(location, options as SizingOptions)
    }
    // With `growth` or `window`, a layered filter (layered-level-filter.ts).
    if (isLayeredOptions(options)) return LayeredLevelFilter.create(location, options)
    // Without a seed, a random one (keyed hashing); a filter already in the folder keeps its own.
    const { parameters, seeded } = newFilterParameters(options)
    const store = await LevelBitStore.create(location, parameters, options, seeded)
    try {
      return new LevelBloomFilter(store, await createKeyHasher(store.parameters.seed))
    } catch (error) {
      await store.close()
      throw error
    }
  }

  /**
   * The filter in `location`, with the parameters stored there. Replays the log a crash left.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_STORE`, `BLOOM_DATA_LOST` (LevelDB lost records
   *   the filter wrote; later calls that read a lost page raise it too), `BLOOM_UNSUPPORTED_VERSION`,
   *   `BLOOM_LOCKED` (open in another process, or already open in this one), `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(location: string, options: LevelOpenOptions = {}): Promise<LevelBloomFilter> {
    const store = await LevelBitStore.open(location, options).catch(async (error: unknown) => {
      if (error instanceof BloomError && error.code === 'BLOOM_CORRUPT_STORE') {
        await refuseLayered(location)
        await refuseCounting(location)
      }
      throw error
    })
    try {
      return new LevelBloomFilter(store, await createKeyHasher(store.parameters.seed))
    } catch (error) {
      await store.close()
      throw error
    }
  }

  /**
   * A new filter in `location` from a snapshot (`export()`/`exportChunks()` of any backend), streamed
   * page by page. Nothing becomes visible unless the whole snapshot checks out.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INVALID_PARAMETER`
   *   (the folder already holds a filter), `BLOOM_CORRUPT_STORE`, `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async import(location: string, snapshot: SnapshotSource, options: LevelImportOptions = {}): Promise<LevelBloomFilter> {
    const store = await LevelBitStore.import(location, snapshot, options)
    try {
      return new LevelBloomFilter(store, await createKeyHasher(store.parameters.seed))
    } catch (error) {
      await store.close()
      throw error
    }
  }

  private constructor(store: LevelBitStore, hasher: Awaited<ReturnType<typeof createKeyHasher>>) {
    super(store, hasher)
    this.level = store
  }

  /** The folder (absolute path) or, in browsers, the IndexedDB name. */
  get location(): string {
    return this.level.location
  }

  /** The store underneath (page size, cache budget, sync mode). */
  get bitStore(): LevelBitStore {
    return this.level
  }

  /**
   * Writes every changed page and deletes the log, so the next open replays nothing. Adds are
   * durable without it; `close()` does it too.
   */
  flush(): Promise<void> {
    try {
      this.checkOpen()
    } catch (error) {
      return Promise.reject(error)
    }
    return this.level.flush()
  }
}

/** Throws `BLOOM_INCOMPATIBLE` if `location` holds a counting filter (a plain open found no plain one there). */
async function refuseCounting(location: string): Promise<void> {
  const where = canonicalLocation(location)
  let counting = false
  try {
    const db = await openDatabase(where, false)
    try {
      counting = (await db.get(COUNTING_META_KEY)) !== undefined
    } finally {
      await closeDatabase(where, db)
    }
  } catch {
    return
  }
  if (counting) throw new BloomError('BLOOM_INCOMPATIBLE', `${where} holds a counting filter: open it with CountingLevelFilter.open`)
}
