import type { GuardSettings } from './options.js'
import { withTimeout } from './timing.js'

/** How {@link GuardedCalls.cacheCall} treats a call. */
export interface CacheCallOptions {
  /** A write (a lock's release, a fence, a value): sent even during a cooldown after a failure. Default: false, a read. */
  readonly write?: boolean
}

/**
 * The guard's calls of its filter and cache, each under its timeout. After a failure, reads of the
 * failed one are skipped for `cooldown` ms, so an outage costs one timeout, not one per step.
 */
export class GuardedCalls {
  private filterDownUntil = 0
  private cacheDownUntil = 0

  constructor(private readonly settings: Pick<GuardSettings<unknown, string>, 'filterTimeout' | 'cacheTimeout' | 'cooldown'>) {}

  /** A synchronous filter's answer as is; an asynchronous one's under `filterTimeout`. */
  filterCall<T>(result: T | Promise<T>, what: string): Promise<T> | T {
    return result instanceof Promise ? withTimeout(result, this.settings.filterTimeout, what) : result
  }

  /** A filter read, skipped during a cooldown after a failure. */
  filterRead<T>(call: () => T | Promise<T>, what: string): Promise<T> | T {
    if (Date.now() < this.filterDownUntil) throw new Error(`${what} skipped: the filter failed less than ${this.settings.cooldown} ms ago`)
    try {
      const result = this.filterCall(call(), what)
      return result instanceof Promise ? result.catch((error: unknown) => this.filterFailedAt(error)) : result
    } catch (error) {
      return this.filterFailedAt(error)
    }
  }

  private filterFailedAt(error: unknown): never {
    this.filterDownUntil = Date.now() + this.settings.cooldown
    throw error
  }

  /** A cache call under `cacheTimeout`; reads (without `write`) are skipped during a cooldown after a failure. */
  cacheCall<T>(call: () => Promise<T>, what: string, { write = false }: CacheCallOptions = {}): Promise<T> {
    if (!write && Date.now() < this.cacheDownUntil) {
      return Promise.reject(new Error(`${what} skipped: the cache failed less than ${this.settings.cooldown} ms ago`))
    }
    let promise: Promise<T>
    try {
      promise = call()
    } catch (error) {
      promise = Promise.reject(error)
    }
    return withTimeout(promise, this.settings.cacheTimeout, what).catch((error: unknown) => {
      this.cacheDownUntil = Date.now() + this.settings.cooldown
      throw error
    })
  }
}
