import { GuardError, invalidOption, messageOf } from './errors.js'
import type { GuardedCalls } from './guarded-calls.js'
import type { GuardFilter, GuardKey, GuardSettings } from './options.js'
import type { GuardStats } from './stats.js'

/**
 * The filter's answer to whether keys may exist. A failing filter is never read as "absent": it
 * means "maybe" (the key goes on to the cache and the database), or rejects, per `onFilterError`.
 */
export class FilterReads<K extends GuardKey> {
  constructor(
    private readonly calls: GuardedCalls,
    private readonly settings: Pick<GuardSettings<unknown, K>, 'onFilterError'>,
    /** Where a failure is counted (`filterErrors`). */
    private readonly counters: GuardStats,
  ) {}

  /** Whether `id` may exist: a failing filter means "maybe" (or rejects, per `onFilterError`). */
  async mayHave(filter: GuardFilter, id: K): Promise<boolean> {
    checkFilter(filter)
    try {
      return await this.calls.filterRead(() => filter.has(id), 'filter.has')
    } catch (error) {
      return this.filterFailed(error)
    }
  }

  async mayHaveMany(filter: GuardFilter, ids: readonly K[]): Promise<boolean[]> {
    checkFilter(filter)
    try {
      return await this.calls.filterRead(() => filter.hasMany(ids), 'filter.hasMany')
    } catch (error) {
      return ids.map(() => this.filterFailed(error))
    }
  }

  /** "Maybe", after counting the failure (or the rejection `onFilterError: 'reject'` asks for). */
  private filterFailed(error: unknown): true {
    this.counters.filterErrors++
    if (this.settings.onFilterError === 'reject') {
      throw new GuardError('GUARD_FILTER_UNAVAILABLE', `the filter failed and onFilterError is 'reject': ${messageOf(error)}`, { cause: error })
    }
    return true
  }
}

function checkFilter(filter: GuardFilter): void {
  if (filter.isClosed) throw invalidOption('filter', 'an open filter', 'a closed filter')
}
