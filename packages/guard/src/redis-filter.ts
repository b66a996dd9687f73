// Opening a Redis filter for a guard: through a replica (its bits in this process, kept current
// from the filter's feed, docs/SPEC.md 9.13) when the filter has a feed and its bits fit the
// memory budget, else as it is (every check asks Redis). The guard takes the class from the
// caller, so that @bloomkit/guard needs no dependency on @bloomkit/redis-backend.
import { invalidOption } from './errors.js'
import { checkNames, type GuardFilter } from './options.js'

/** The default of {@link OpenGuardFilterOptions.memoryBudget}: 64 MiB, a filter of ~50M keys at 1 %. */
const DEFAULT_GUARD_MEMORY_BUDGET = 64 * 2 ** 20

/** Options of {@link openGuardFilter}. */
export interface OpenGuardFilterOptions {
  /**
   * The most bytes of bits a replica may hold in this process, from 0 (never a replica) to
   * 2^53 − 1. A filter with a feed whose bits (`parameters.bits / 8`) fit is opened with a
   * replica; a larger one, or one without a feed, is opened without. Default: 64 MiB.
   */
  readonly memoryBudget?: number
}

/** What {@link openGuardFilter} passes to `open`: a fixed filter, with a strict replica bounded by the budget, or nothing. */
export interface GuardOpenOptions {
  readonly kind?: 'fixed'
  readonly replica?: { readonly maxBytes: number }
}

/** The part of `RedisBloomFilter` (from `@bloomkit/redis-backend`) that {@link openGuardFilter} uses. */
export interface RedisFilterClass<C, F extends GuardFilter> {
  open(redis: C, name: string, options?: GuardOpenOptions): Promise<F>
}

/** What a filter says of itself that decides whether a replica fits (`RedisBloomFilter`'s fields). */
interface ReplicaFacts {
  readonly kind?: string
  readonly feedLength?: number
  readonly parameters?: { readonly bits?: number }
  close?(): unknown
}

/**
 * Opens the Redis filter `name` for a guard: with a replica when it is a fixed filter with a feed
 * (created with `feed: true`) whose bits fit `memoryBudget`, so that the guard's checks of
 * existing IDs are answered from memory and those of absent IDs after one shared read of the feed
 * (strict: a key whose `created` resolved before a `get` began is always found); otherwise as
 * `open` gives it (layered and counting filters, filters without a feed, larger filters).
 *
 * @example
 * const userIds = await openGuardFilter(RedisBloomFilter, redis, 'user-ids')
 * const users = new CacheGuard<User>({ filter: userIds, cache: redis, name: 'users', load })
 *
 * @param filterClass `RedisBloomFilter` from `@bloomkit/redis-backend`.
 * @throws GuardError `GUARD_INVALID_OPTION` (`memoryBudget`), and whatever `open` throws
 *   (`BLOOM_NOT_FOUND`, `BLOOM_STORE_UNAVAILABLE`, …).
 */
export async function openGuardFilter<C, F extends GuardFilter>(filterClass: RedisFilterClass<C, F>, redis: C, name: string, options: OpenGuardFilterOptions = {}): Promise<F> {
  const budget = memoryBudgetOf(options)
  const plain = await filterClass.open(redis, name)
  const facts = plain as unknown as ReplicaFacts
  const bytes = (facts.parameters?.bits ?? Infinity) / 8
  if (facts.kind !== 'fixed' || facts.feedLength === undefined || bytes > budget) return plain
  // The replica is a second open of the same name; the plain one has done its job (it told the size).
  const replicated = await filterClass.open(redis, name, { kind: 'fixed', replica: { maxBytes: budget } })
  await facts.close?.()
  return replicated
}

function memoryBudgetOf(options: OpenGuardFilterOptions): number {
  checkNames('openGuardFilter', options, ['memoryBudget'])
  const { memoryBudget } = options
  if (memoryBudget === undefined) return DEFAULT_GUARD_MEMORY_BUDGET
  if (typeof memoryBudget !== 'number' || !Number.isSafeInteger(memoryBudget) || memoryBudget < 0) {
    throw invalidOption('memoryBudget', 'an integer from 0 to 2^53 − 1 (bytes)', memoryBudget)
  }
  return memoryBudget
}
