import { BloomError, BloomFilter, sizeFilter, type SizingOptions } from '@bloomkit/core'
import { earlierSizeFilter, isLayeredOptions, newFilterParameters, optionChecks, snapshotSources, type KeyHasher } from '@bloomkit/core/store'
import { LayeredLevelFilter, layeredFilterInFolder, type LayeredLevelOpenOptions, type LayeredLevelOptions } from './layered/layered-level-filter.js'
import { type SnapshotSource } from './folder/import.js'
import { CountingLevelFilter, countingFilterInFolder } from './counting/counting-level-filter.js'
import { canonicalLocation } from './folder/database.js'
import { bitStoreInFolder, LevelBitStore } from './level-bit-store.js'
import { closeStoredFolder, openStoredFolder, type StoredKind } from './folder/stored-kind.js'
import { filterOver } from './filter-over.js'
import { checkLevelOptions, type LevelCreateStoreOptions } from './options.js'

const { peekKind, wholeSnapshot } = snapshotSources

/** Options of {@link LevelBloomFilter.create}: sizing (core's `SizingOptions`) plus the store's. */
export interface LevelCreateOptions extends SizingOptions, LevelCreateStoreOptions {}

/** Which kind of filter `open` or `import` must find: a fixed one (`LevelBloomFilter`), a layered one (`LayeredLevelFilter`) or a counting one (`CountingLevelFilter`). */
export type LevelFilterKind = StoredKind

/**
 * Options of {@link LevelBloomFilter.open}: how this process uses the folder; nothing here is stored.
 * `clock` serves a rotating layered filter; `kind` insists on one kind of filter (default: either).
 */
export type LevelOpenOptions = LayeredLevelOpenOptions & { readonly kind?: LevelFilterKind }

/** Options of {@link LevelBloomFilter.import}: the store's, a rotating filter's `clock`, and `kind` as for `open`. */
export type LevelImportOptions = LevelCreateStoreOptions & { readonly clock?: () => number; readonly kind?: LevelFilterKind }

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
  /** A fixed filter (a counting one is a `Counting…Filter`, a layered one a `Layered…Filter`). */
  declare readonly kind: 'fixed'
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
    checkLevelOptions('LevelBloomFilter.create', options)
    // With `counting: true`, a counting filter (counting-level-filter.ts), which refuses `growth` and
    // `window`. (`counting` is a boolean by now: checkLevelOptions refused 1, 'yes' and null.)
    if ((options as { counting?: boolean }).counting === true) {
      return CountingLevelFilter.create(location, options as LevelCreateOptions)
    }
    // With `growth` or `window`, a layered filter (layered-level-filter.ts).
    if (isLayeredOptions(options)) return LayeredLevelFilter.create(location, options)
    // Without a seed, a random one (keyed hashing); a filter already in the folder keeps its own.
    optionChecks.checkCreateKind(options, 'fixed')
    const { parameters, seeded, earlier } = newFilterParameters(options, sizeFilter, earlierSizeFilter)
    return LevelBloomFilter.over(await LevelBitStore.create(location, parameters, options, { seeded, earlier }))
  }

  /**
   * The filter in `location`, whatever `create` or `import` made there: a fixed filter as a
   * `LevelBloomFilter`, a layered one (made with `growth` or `window`) as a {@link LayeredLevelFilter},
   * a counting one (`counting: true`) as a {@link CountingLevelFilter}.
   * Tell them apart by `filter.kind` (`'fixed'`, `'layered'` or `'counting'`), or pass `kind` to insist on one:
   * the result is then typed as that class, and a folder holding the other kind is
   * `BLOOM_INCOMPATIBLE`. Replays the log a crash left.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_INCOMPATIBLE` (not the `kind` asked for), `BLOOM_CORRUPT_STORE`, `BLOOM_DATA_LOST` (LevelDB
   *   lost records the filter wrote; later calls that read a lost page raise it too),
   *   `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_LOCKED` (open in another process, or already open in this one),
   *   `BLOOM_STORE_UNAVAILABLE`.
   */
  static open(location: string, options: LevelOpenOptions & { readonly kind: 'fixed' }): Promise<LevelBloomFilter>
  static open(location: string, options: LevelOpenOptions & { readonly kind: 'layered' }): Promise<LayeredLevelFilter>
  static open(location: string, options: LevelOpenOptions & { readonly kind: 'counting' }): Promise<CountingLevelFilter>
  static open(location: string, options?: LevelOpenOptions): Promise<LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter>
  static async open(location: string, options: LevelOpenOptions = {}): Promise<LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter> {
    checkLevelOptions('LevelBloomFilter.open', options)
    const asked = options.kind // checked by checkLevelOptions
    // The folder is opened once and its records say the kind; that kind is then built over it.
    const folder = await openStoredFolder(canonicalLocation(location))
    if (asked !== undefined && folder.kind !== asked) {
      await closeStoredFolder(folder)
      throw new BloomError('BLOOM_INCOMPATIBLE', `${folder.where} holds a ${folder.kind} filter, not a ${asked} one (kind: '${asked}' was asked for)`)
    }
    if (folder.kind === 'layered') return layeredFilterInFolder(folder.where, folder.db, options)
    if (folder.kind === 'counting') return countingFilterInFolder(folder, options)
    return LevelBloomFilter.over(await bitStoreInFolder(folder, options))
  }

  /**
   * A new filter in `location` from a snapshot (`export()`/`exportChunks()` of any backend): a fixed
   * filter's (format version 1, streamed page by page) as a `LevelBloomFilter`, a layered one's
   * (version 2) as a {@link LayeredLevelFilter}, a counting one's (version 3) as a
   * {@link CountingLevelFilter}; tell them apart by `kind`, or pass `kind` to insist on one (another
   * kind is `BLOOM_INCOMPATIBLE`). Nothing becomes visible unless the whole snapshot checks out.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INVALID_PARAMETER`
   *   (the folder already holds a filter), `BLOOM_INCOMPATIBLE` (not the `kind` asked for),
   *   `BLOOM_CORRUPT_STORE`, `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static import(location: string, snapshot: SnapshotSource, options: LevelImportOptions & { readonly kind: 'fixed' }): Promise<LevelBloomFilter>
  static import(location: string, snapshot: SnapshotSource, options: LevelImportOptions & { readonly kind: 'layered' }): Promise<LayeredLevelFilter>
  static import(location: string, snapshot: SnapshotSource, options: LevelImportOptions & { readonly kind: 'counting' }): Promise<CountingLevelFilter>
  static import(location: string, snapshot: SnapshotSource, options?: LevelImportOptions): Promise<LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter>
  static async import(location: string, snapshot: SnapshotSource, options: LevelImportOptions = {}): Promise<LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter> {
    checkLevelOptions('LevelBloomFilter.import', options)
    const kind = options.kind // checked by checkLevelOptions
    const { kind: found, source } = await peekKind(snapshot, kind)
    if (found === 'layered') return LayeredLevelFilter.import(location, await wholeSnapshot(source), options)
    if (found === 'counting') return CountingLevelFilter.import(location, source, options)
    return LevelBloomFilter.over(await LevelBitStore.import(location, source, options))
  }

  /** The filter over an opened store; closes the store if the filter cannot be made. */
  private static over(store: LevelBitStore): Promise<LevelBloomFilter> {
    return filterOver(store, store.parameters.seed, (hasher) => new LevelBloomFilter(store, hasher))
  }

  private constructor(store: LevelBitStore, hasher: KeyHasher) {
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
