import { CountingBloomFilter, sizeFilter, type FilterParametersInput, type SizingOptions } from '@bloomkit/core'
import { checkOptionNames, earlierSizeFilter, newFilterParameters, optionChecks, type KeyHasher, type SnapshotSource } from '@bloomkit/core/store'
import { filterOver } from '../filter-over.js'
import { LevelCounterStore } from './level-counter-store.js'
import { checkLevelOptions, type LevelCreateStoreOptions, type LevelStoreOptions } from '../options.js'
import type { FilterDatabase } from '../folder/stored-kind.js'

/** CountingLevelFilter's private `over`, shared by its static block with {@link countingFilterInFolder}. */
let over: (store: LevelCounterStore) => Promise<CountingLevelFilter>

/** The counting filter over a database `LevelBloomFilter.open` opened and read (stored-kind.ts), without a second open. Package-internal. */
export const countingFilterInFolder = async (folder: FilterDatabase, options: LevelStoreOptions): Promise<CountingLevelFilter> => over(await LevelCounterStore.inFolder(folder, options))

/**
 * A counting Bloom filter in a LevelDB folder (IndexedDB in browsers): `remove`/`removeMany`
 * beside `add`/`has`/`addMany`/`hasMany`, every method a Promise. A 4-bit counter per position
 * (docs/SPEC.md, section 10): the folder holds `bits / 2` bytes of counters. One process at a time
 * (LevelDB's lock); within it, every batch runs alone and its pages are written in one atomic
 * LevelDB batch, so a key's counters change together or not at all. The folder has a plain one's
 * checks (page versions and CRC-32s, a log without gaps, the anchor file): what LevelDB loses is
 * `BLOOM_DATA_LOST`, never a key read absent.
 *
 * `remove` is for keys you added: removing a key that reads absent changes nothing and resolves
 * to false, but removing a never-added key that reads present (a false positive) decrements
 * counters of keys that were added. A counter that reaches 15 stays at 15.
 *
 * @example
 * const filter = await LevelBloomFilter.create('./sessions', { capacity: 100_000, errorRate: 0.01, counting: true })
 * await filter.add('s:1')
 * await filter.remove('s:1') // true
 */
export class CountingLevelFilter extends CountingBloomFilter<false> {
  private readonly level: LevelCounterStore

  private constructor(store: LevelCounterStore, hasher: KeyHasher) {
    super(store, hasher)
    this.level = store
  }

  // A static block may reach the class's privates: so countingFilterInFolder can, and the class keeps no public door for it.
  static {
    over = (store) => CountingLevelFilter.over(store)
  }

  private static over(store: LevelCounterStore): Promise<CountingLevelFilter> {
    return filterOver(store, store.parameters.seed, (hasher) => new CountingLevelFilter(store, hasher))
  }

  /**
   * A new counting filter in `location` sized for `capacity` keys at `errorRate` (the plain
   * filter's sizing), or the counting filter already there with these parameters. Also reached by
   * `LevelBloomFilter.create(location, { …, counting: true })`. Store options: `pageBytes`, `sync`
   * and `checkpointBytes` as for a plain filter (`cacheBytes` does not apply: the counters read stay in memory).
   * @throws BloomError `BLOOM_INCOMPATIBLE` (a plain filter, or other parameters, there), `BLOOM_DATA_LOST`, `BLOOM_LOCKED`, `BLOOM_INVALID_PARAMETER`, …
   */
  static async create(location: string, options: SizingOptions & LevelCreateStoreOptions): Promise<CountingLevelFilter> {
    checkLevelOptions('CountingLevelFilter.create', options)
    optionChecks.checkCountingCreate(options)
    const { parameters, seeded, earlier } = newFilterParameters(options, sizeFilter, earlierSizeFilter)
    return CountingLevelFilter.over(await LevelCounterStore.create(location, parameters, options, { seeded, earlier }))
  }

  /** A new counting filter with explicit parameters. */
  static async fromParameters(location: string, parameters: FilterParametersInput): Promise<CountingLevelFilter> {
    checkOptionNames('CountingLevelFilter.fromParameters', parameters, ['parameters'])
    return CountingLevelFilter.over(await LevelCounterStore.create(location, parameters))
  }

  /**
   * The counting filter in `location`; checks its log and anchor, as a plain open does.
   * @throws BloomError `BLOOM_INCOMPATIBLE` for a plain filter's folder (open it with `LevelBloomFilter.open`), `BLOOM_NOT_FOUND`,
   *   `BLOOM_DATA_LOST` (LevelDB lost records the filter wrote; later calls that read a lost page raise it too), `BLOOM_CORRUPT_STORE`,
   *   `BLOOM_UNSUPPORTED_VERSION` (a counting folder of format version 1, from a build before the first release with counting filters), `BLOOM_LOCKED`.
   */
  static async open(location: string, options: LevelStoreOptions = {}): Promise<CountingLevelFilter> {
    return CountingLevelFilter.over(await LevelCounterStore.open(location, options))
  }

  /**
   * A new counting filter in `location` (new or empty) from a counting snapshot (format version 3).
   * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` for a plain snapshot, `BLOOM_CORRUPT_SNAPSHOT`, …
   */
  static async import(location: string, snapshot: SnapshotSource, options: LevelCreateStoreOptions = {}): Promise<CountingLevelFilter> {
    return CountingLevelFilter.over(await LevelCounterStore.import(location, snapshot, options))
  }

  /** The folder (absolute path) or, in browsers, the IndexedDB name. */
  get location(): string {
    return this.level.location
  }
}
