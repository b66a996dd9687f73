import { GuardError, invalidOption, messageOf } from './errors.js'
import { given, type GuardFilter, type GuardKey } from './options.js'

/** Progress of {@link CacheGuard.warm} and {@link CacheGuard.rebuild}. */
export interface WarmOptions {
  /** Keys per filter batch (1 to 1 000 000). Default: 10 000. */
  batchSize?: number
  /** Called after each batch with the number of keys added so far. */
  onProgress?: (added: number) => void
}

/** Options of {@link CacheGuard.rebuild}. */
export interface RebuildOptions extends WarmOptions {
  /**
   * A new, empty filter to fill and then use instead of the current one, for filters without an
   * atomic rebuild of their own (memory, LevelDB). The guard returns the old filter for you to close.
   */
  into?: GuardFilter
}

/** The names of {@link WarmOptions} and {@link RebuildOptions} (Records, so that an option added to a type must be listed). */
export const WARM_OPTIONS = Object.keys({ batchSize: true, onProgress: true } satisfies Record<keyof WarmOptions, true>)
export const REBUILD_OPTIONS = [...WARM_OPTIONS, ...Object.keys({ into: true } satisfies Record<Exclude<keyof RebuildOptions, keyof WarmOptions>, true>)]

/**
 * Checks the values of {@link WarmOptions} (a rebuild without `into` checks them too, though a
 * filter's own rebuild does not batch) and returns the batch size.
 * @throws GuardError `GUARD_INVALID_OPTION` naming the option.
 */
export function checkWarmOptions(options: WarmOptions): { readonly batchSize: number } {
  const batchSize = given(options.batchSize, 10_000)
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1_000_000) throw invalidOption('batchSize', 'an integer from 1 to 1000000', batchSize)
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') throw invalidOption('onProgress', 'a function', options.onProgress)
  return { batchSize }
}

/**
 * Adds every key of `ids` to `filter` in batches of `options.batchSize` (the work of `warm` and of
 * a rebuild `into` a new filter); `checkKey` throws on a key the guard would refuse. Resolves to the
 * number of keys added.
 */
export async function fill<K extends GuardKey>(filter: GuardFilter, ids: AsyncIterable<K> | Iterable<K>, options: WarmOptions, checkKey: (id: K) => void): Promise<number> {
  if (ids === null || typeof ids !== 'object' || (!(Symbol.asyncIterator in ids) && !(Symbol.iterator in ids))) {
    throw invalidOption('ids', 'an iterable or async iterable of keys', ids)
  }
  const { batchSize } = checkWarmOptions(options)
  let added = 0
  let batch: K[] = []
  const flush = async () => {
    try {
      await filter.addMany(batch)
    } catch (error) {
      throw new GuardError('GUARD_FILTER_UNAVAILABLE', `the filter could not add keys after ${added}: ${messageOf(error)}`, { cause: error })
    }
    added += batch.length
    batch = []
    options.onProgress?.(added)
  }
  for await (const id of ids as AsyncIterable<K>) {
    checkKey(id)
    batch.push(id)
    if (batch.length === batchSize) await flush()
  }
  if (batch.length > 0) await flush()
  return added
}
