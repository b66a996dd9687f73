import type { FilterParameters } from '@bloomkit/core'
import { checkInteger, checkOptionNames, invalidParameter, optionChecks, shardBytesOf } from '@bloomkit/core/store'

const { checkBoolean } = optionChecks

/** Options for opening a LevelDB store; none of them is stored in the folder. */
export interface LevelStoreOptions {
  /**
   * The page cache's budget in bytes: at most this much of the filter's bits is held in memory.
   * From 4 pages to 2 GiB; never more than the filter's own size is allocated.
   * @default 64 MiB
   */
  readonly cacheBytes?: number
  /**
   * Fsync LevelDB's log on every write, so a resolved `add` survives power loss, not just a crash
   * of the process. Several times slower. Ignored in browsers (IndexedDB decides).
   * @default false
   */
  readonly sync?: boolean
  /**
   * Log bytes after which pages are checkpointed and the log deleted (it also waits for the log to
   * reach a quarter of the dirty pages' bytes, so that pages are not rewritten for a few keys).
   * Bounds the work of replaying the log at open. From 64 KiB.
   * @default 32 MiB
   */
  readonly checkpointBytes?: number
}

/** Options for creating a LevelDB store; `pageBytes` is stored in the folder. */
export interface LevelCreateStoreOptions extends LevelStoreOptions {
  /**
   * Bytes of bits per page (one LevelDB value), a power of two from 1 KiB to 1 MiB.
   * @default 16 KiB
   */
  readonly pageBytes?: number
}

/** The store's option names, written as a Record so that an option added to the type must be listed. */
const STORE_OPTIONS = Object.keys({ cacheBytes: true, sync: true, checkpointBytes: true, pageBytes: true } satisfies Record<keyof LevelCreateStoreOptions, true>)

/**
 * Checks the options of any LevelDB call, the backend's one place for it: core's checks of the
 * object, its names (a typo such as `capcity` would otherwise leave a default in place) and own
 * properties, and the values of core's options; then the values of the store's own options, even
 * where this call does not use them (a counting filter's create, an open's `pageBytes`). Every
 * entry checks against all the backend's names, not its own subset: one call's options are passed
 * on to another (create to a layered or counting create, open to a layered open), and a Redis-only
 * option is still refused.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
 */
export function checkLevelOptions(call: string, options: unknown): void {
  checkOptionNames(call, options, ['sizing', 'layered', 'counting', 'kind'], STORE_OPTIONS)
  checkStoreOptions(options as LevelStoreOptions)
  pageBytesOf(options as LevelCreateStoreOptions)
}

/**
 * At a create or an import, before the folder is touched: `cacheBytes` holds at least 4 pages of
 * the page size asked for, so that a budget too small is refused before anything is written (and,
 * for a layered filter, at create rather than at its first add). An open checks the folder's own
 * page size when it opens the store.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `cacheBytes`.
 */
export function checkCacheForNewPages(options: LevelCreateStoreOptions): void {
  if (options.cacheBytes !== undefined) cachePages(options.cacheBytes, pageBytesOf(options), Number.MAX_SAFE_INTEGER)
}

/** The `pageBytes` option, checked, or its default. */
export function pageBytesOf(options: LevelCreateStoreOptions): number {
  return options.pageBytes === undefined ? DEFAULT_PAGE_BYTES : checkPageBytes(options.pageBytes)
}

/** Bytes of a page by default: measured in benchmarks/src/level.ts (see the README). */
export const DEFAULT_PAGE_BYTES = 16 * 1024
/** Smallest and largest page sizes (powers of two). */
const MIN_PAGE_BYTES = 1024
const MAX_PAGE_BYTES = 1024 * 1024
const DEFAULT_CACHE_BYTES = 64 * 2 ** 20
const DEFAULT_CHECKPOINT_BYTES = 32 * 2 ** 20
const MIN_CHECKPOINT_BYTES = 65_536
/** The cache never has fewer slots than this, whatever the budget. */
export const MIN_CACHE_PAGES = 4
/** The cache is one Uint8Array; 2 GiB keeps it within every engine's typed-array limit. */
const MAX_CACHE_BYTES = 2 ** 31
/** Page tables cost 8 bytes per page outside the cache budget; 2^24 pages is 256 GiB of bits at 16 KiB pages. */
const MAX_PAGES = 2 ** 24

/** The options of one open store, checked, with their defaults filled in. */
export interface StoreSettings {
  readonly cacheBytes: number
  readonly sync: boolean
  readonly checkpointBytes: number
}

/** An optional integer option: its default when undefined, else core's range check. */
function checkOption(name: string, value: unknown, min: number, max: number, fallback: number): number {
  return value === undefined ? fallback : checkInteger(name, value, min, max)
}

/** Asserts an options object (not null, not a primitive). */
function checkObject<T extends object>(name: string, value: T): T {
  if (value === null || typeof value !== 'object') throw invalidParameter(name, 'an object', value)
  return value
}

/**
 * Checks the options every open takes and fills in their defaults. `cacheBytes` is checked against
 * the page size once it is known ({@link cachePages}).
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its range.
 */
export function checkStoreOptions(options: LevelStoreOptions): StoreSettings {
  checkObject('options', options)
  return {
    sync: options.sync === undefined ? false : checkBoolean('sync', options.sync),
    cacheBytes: checkOption('cacheBytes', options.cacheBytes, 1, MAX_CACHE_BYTES, DEFAULT_CACHE_BYTES),
    checkpointBytes: checkOption('checkpointBytes', options.checkpointBytes, MIN_CHECKPOINT_BYTES, Number.MAX_SAFE_INTEGER, DEFAULT_CHECKPOINT_BYTES),
  }
}

/**
 * Slots of the page cache: the budget in pages (at least {@link MIN_CACHE_PAGES}), never more than the filter's pages.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` when `cacheBytes` is under 4 pages.
 */
export function cachePages(cacheBytes: number, pageBytes: number, pages: number): number {
  checkOption('cacheBytes', cacheBytes, MIN_CACHE_PAGES * pageBytes, MAX_CACHE_BYTES, DEFAULT_CACHE_BYTES)
  return Math.min(pages, Math.max(MIN_CACHE_PAGES, Math.floor(cacheBytes / pageBytes)))
}

/**
 * Asserts a page size: a power of two from 1 KiB to 1 MiB.
 * @throws BloomError `BLOOM_INVALID_PARAMETER`.
 */
export function checkPageBytes(pageBytes: unknown): number {
  if (typeof pageBytes !== 'number' || !Number.isInteger(pageBytes) || pageBytes < MIN_PAGE_BYTES || pageBytes > MAX_PAGE_BYTES || (pageBytes & (pageBytes - 1)) !== 0) {
    throw invalidParameter('pageBytes', `a power of two from ${MIN_PAGE_BYTES} to ${MAX_PAGE_BYTES}`, pageBytes)
  }
  return pageBytes
}

/**
 * Asserts that the filter has at most 2^24 pages of `pageBytes` (of `shardBytes` per shard: its
 * bits', or a counting filter's counters').
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `pageBytes`.
 */
export function checkPageTable(parameters: FilterParameters, pageBytes: number, { shardBytes = shardBytesOf(parameters) }: { readonly shardBytes?: number } = {}): void {
  const pages = parameters.shards * Math.ceil(shardBytes / pageBytes)
  if (pages > MAX_PAGES) {
    throw invalidParameter('pageBytes', `large enough for at most ${MAX_PAGES} pages (${pages} pages for ${parameters.bits} bits)`, pageBytes)
  }
}
