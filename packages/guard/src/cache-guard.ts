import { LRUCache } from 'lru-cache'
import type { GuardCache } from './cache.js'
import { ABSENT, cacheKeyOf, FENCE_TAG, isDetached, keyPrefixOf, lockKeyOf, VALUE_TAG, type CacheRead } from './entries.js'
import { describe, GuardError, invalidOption, messageOf } from './errors.js'
import { GuardedCalls } from './guarded-calls.js'
import { FilterReads } from './filter-reads.js'
import { checkWarmOptions, fill, REBUILD_OPTIONS, WARM_OPTIONS, type RebuildOptions, type WarmOptions } from './maintenance.js'
import { checkNames, checkOptions, type CacheGuardOptions, type GuardFilter, type GuardKey, type GuardSettings } from './options.js'
import { awaitTurn, Flights, type Flight, type LockWait } from './single-flight.js'
import { zeroStats, type GuardStats } from './stats.js'
import { loadWithin } from './timing.js'
import { ValueCodec } from './value-codec.js'

/**
 * The read path in front of a database: a Bloom filter of every existing ID, a cache holding values
 * and "absent" markers, and one load per key at a time (in-process and, with Redis, across
 * processes). Requests for IDs that do not exist stop at the filter; an error is never read as
 * "not found".
 *
 * @example
 * const guard = new CacheGuard<User>({ filter, cache: redis, name: 'users', load: (id) => db.user(id) })
 * await guard.get('42') // the user, or null when there is none
 */
export class CacheGuard<V, K extends GuardKey = string> {
  /** The guard's name, as given. */
  readonly name: string
  /** The name as it begins every cache and lock key: escaped, so no other guard's key starts the same way. */
  private readonly prefix: string
  private filter: GuardFilter
  /** The filter a non-atomic rebuild is filling: `created` adds to it too. */
  private nextFilter: GuardFilter | undefined
  private readonly settings: GuardSettings<V, K>
  private readonly cache: GuardCache | undefined
  private readonly l1: LRUCache<string, { value: V }> | undefined
  private readonly flights = new Flights<V>()
  /** The guard as the cross-process lock wait sees it (set when there is a cache). */
  private readonly lockWait: LockWait<V> | undefined
  private readonly counters: GuardStats = zeroStats()
  /** A load that took longer than this may predate a fence that has expired meanwhile: not cached. */
  private readonly fenceMs: number
  /** Filter and cache calls under their timeouts, skipped during a cooldown after a failure. */
  private readonly calls: GuardedCalls
  /** Values to and from cache entries. */
  private readonly codec: ValueCodec<V, K>
  /** The filter's answers, where a failing filter means "maybe". */
  private readonly reads: FilterReads<K>
  private closed = false

  /** @throws GuardError `GUARD_INVALID_OPTION` naming the first bad option. */
  constructor(options: CacheGuardOptions<V, K>) {
    this.settings = checkOptions(options)
    this.name = this.settings.name
    this.prefix = keyPrefixOf(this.name)
    this.filter = this.settings.filter
    this.cache = this.settings.cache
    this.calls = new GuardedCalls(this.settings)
    this.codec = new ValueCodec(this.settings, this.counters)
    this.reads = new FilterReads(this.calls, this.settings, this.counters)
    this.fenceMs = Math.max(10_000, 2 * this.settings.lockTtl)
    if (this.settings.l1) this.l1 = new LRUCache({ max: this.settings.l1.max, ttl: this.settings.l1.ttl })
    if (this.cache !== undefined) {
      this.lockWait = {
        cache: this.cache,
        prefix: this.prefix,
        lockTtl: this.settings.lockTtl,
        lockWait: this.settings.lockWait,
        counters: this.counters,
        cacheCall: (call, what, options) => this.calls.cacheCall(call, what, options),
        readCache: (keys) => this.readCache(keys),
        decode: (raw) => this.codec.decode(raw),
      }
    }
  }

  /**
   * The value of `id`, or null when it does not exist: the filter first (absent → null), then
   * `l1`, the cache (value, or a cached "absent"), then one load per key at a time, whose result is
   * cached (`ttl` for a value, `nullTtl` for "absent"). A failing filter or cache falls back to the
   * next step; null always means the filter or the database said absent.
   * @throws GuardError `GUARD_LOAD_FAILED`, `GUARD_SERIALIZE_FAILED`, `GUARD_FILTER_UNAVAILABLE`
   *   (only with `onFilterError: 'reject'`), `GUARD_INVALID_KEY`, `GUARD_CLOSED`.
   */
  async get(id: K): Promise<V | null> {
    this.checkOpen()
    const key = this.cacheKey(id)
    this.counters.requests++
    if (!(await this.reads.mayHave(this.filter, id))) {
      this.counters.filtered++
      return null
    }
    const hot = this.l1?.get(key)
    if (hot !== undefined) {
      this.counters.l1Hits++
      return hot.value
    }
    const running = this.flights.get(key)
    if (running !== undefined) {
      this.counters.joinedLoads++
      return running
    }
    const [read] = await this.readCache([key])
    return this.answer(id, key, read)
  }

  /**
   * The values of `ids` in input order (null where absent): one filter batch, one cache round trip
   * (MGET) for the keys the filter passes, then a load per missing key (each single-flight; a key
   * listed twice is loaded once).
   * @throws as {@link get}; the first failing key rejects the whole call.
   */
  async getMany(ids: readonly K[]): Promise<(V | null)[]> {
    this.checkOpen()
    if (!Array.isArray(ids)) throw invalidOption('ids', 'an array of keys', ids)
    const keys = ids.map((id) => this.cacheKey(id))
    this.counters.requests += ids.length
    const results: (V | null)[] = new Array(ids.length).fill(null)
    const maybe = await this.reads.mayHaveMany(this.filter, ids)
    const toRead: number[] = []
    for (let i = 0; i < ids.length; i++) {
      if (!maybe[i]) {
        this.counters.filtered++
        continue
      }
      const hot = this.l1?.get(keys[i])
      if (hot !== undefined) {
        this.counters.l1Hits++
        results[i] = hot.value
      } else {
        toRead.push(i)
      }
    }
    const reads = await this.readCache(toRead.map((i) => keys[i]))
    await Promise.all(
      toRead.map(async (i, n) => {
        results[i] = await this.answer(ids[i], keys[i], reads[n])
      }),
    )
    return results
  }

  /**
   * Call after the database insert of `id` has committed: adds `id` to the filter and fences off
   * any cached "absent" marker. Resolves only once the filter holds the key, so a `get` that starts
   * afterwards, in any process sharing the filter and cache, finds the row.
   * @throws GuardError `GUARD_FILTER_UNAVAILABLE` or `GUARD_CACHE_UNAVAILABLE`: the key may not be
   *   visible yet; call again (it is idempotent).
   */
  async created(id: K): Promise<void> {
    this.checkOpen()
    const key = this.cacheKey(id)
    try {
      await this.calls.filterCall(this.filter.add(id), 'filter.add')
      if (this.nextFilter !== undefined) await this.calls.filterCall(this.nextFilter.add(id), 'filter.add')
    } catch (error) {
      throw new GuardError('GUARD_FILTER_UNAVAILABLE', `created(${describe(id)}): the filter could not add the key: ${messageOf(error)}`, { cause: error, id })
    }
    await this.fence(id, key, 'created')
  }

  /**
   * Call after a database update or delete of `id` has committed: fences off the cached value (or
   * marker), so the next `get` loads again and a load that read the old row cannot cache it. The
   * filter keeps the key; after a delete, call {@link deleted} instead, which also removes the key
   * from a counting filter.
   * @throws GuardError `GUARD_CACHE_UNAVAILABLE`: the old value may stay cached until its TTL; retry.
   */
  async invalidate(id: K): Promise<void> {
    this.checkOpen()
    await this.fence(id, this.cacheKey(id), 'invalidate')
  }

  /**
   * Call after the database delete of `id` has committed (once per row deleted, as `created` was
   * called once per row inserted). With a counting filter (one with `remove`), removes `id` from
   * it, so `get(id)` answers null without reaching the cache or the database; then fences the
   * cache as {@link invalidate} does. With a plain filter the key stays until {@link rebuild}, and
   * this is `invalidate`.
   *
   * Do not call it for a row that was never announced with `created` (or `warm`): a key that was
   * never added but reads present (a false positive) would take counts from other keys, and could
   * make an existing row read absent. During a {@link rebuild} into a new filter, the key stays in
   * the new one (it may be a false positive there): a harmless extra load until the next rebuild.
   * @throws GuardError `GUARD_FILTER_UNAVAILABLE`: the key may or may not be removed; do NOT call
   *   again for the filter's sake (a key removed twice takes counts from other keys): a key left in
   *   it costs only a database read, cached as absent. `GUARD_CACHE_UNAVAILABLE`: retry `invalidate`.
   */
  async deleted(id: K): Promise<void> {
    this.checkOpen()
    const key = this.cacheKey(id)
    const filter = this.filter
    if (typeof filter.remove === 'function') {
      try {
        await this.calls.filterCall(filter.remove(id), 'filter.remove')
      } catch (error) {
        // The cache is still fenced (the deleted row must not be served from it), and the filter's
        // error is the one reported: it says not to call again.
        const fenced = await this.fence(id, key, 'deleted').then(() => true, () => false)
        throw new GuardError(
          'GUARD_FILTER_UNAVAILABLE',
          `deleted(${describe(id)}): the filter could not remove the key (it may have; do not remove it again): ${messageOf(error)}` +
            (fenced ? '' : '; the cache could not be fenced either: call invalidate'),
          { cause: error, id },
        )
      }
    }
    await this.fence(id, key, 'deleted')
  }

  /**
   * Adds every key of `ids` (e.g. streamed from the database at start-up) to the filter in batches.
   * Resolves to the number of keys added.
   * @throws GuardError `GUARD_FILTER_UNAVAILABLE`, `GUARD_INVALID_KEY`.
   */
  async warm(ids: AsyncIterable<K> | Iterable<K>, options: WarmOptions = {}): Promise<number> {
    this.checkOpen()
    checkNames('warm', options, WARM_OPTIONS)
    return fill(this.filter, ids, options, (id) => this.cacheKey(id))
  }

  /**
   * Rebuilds the filter from `ids` (every key that exists now) while serving, which drops deleted
   * keys. A `RedisBloomFilter` does it atomically itself (readers see the old bits until the swap,
   * adds meanwhile go to both). For other filters pass `into`, a new empty filter: the guard fills
   * it, adds keys `created` meanwhile to both, then switches to it and resolves to the old filter.
   * @throws GuardError `GUARD_INVALID_OPTION` (no atomic rebuild and no `into`),
   *   `GUARD_FILTER_UNAVAILABLE`; a Redis rebuild rejects with the filter's own BloomError.
   */
  async rebuild(ids: AsyncIterable<K> | Iterable<K>, options: RebuildOptions = {}): Promise<GuardFilter | undefined> {
    this.checkOpen()
    checkNames('rebuild', options, REBUILD_OPTIONS)
    checkWarmOptions(options)
    const { into } = options
    if (into === undefined) {
      if (typeof this.filter.rebuild !== 'function') {
        throw invalidOption('into', 'a new empty filter, since this filter has no atomic rebuild of its own', into)
      }
      await this.filter.rebuild(ids)
      return undefined
    }
    if (into === null || typeof into !== 'object' || typeof into.addMany !== 'function' || into.isClosed) {
      throw invalidOption('into', 'an open, empty bloomkit filter', into)
    }
    if (this.nextFilter !== undefined) throw invalidOption('into', 'unset while another rebuild runs', into)
    this.nextFilter = into
    try {
      await fill(into, ids, options, (id) => this.cacheKey(id))
      const old = this.filter
      this.filter = into
      return old
    } finally {
      this.nextFilter = undefined
    }
  }

  /** A copy of the counters. */
  stats(): GuardStats {
    return { ...this.counters }
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed
  }

  /**
   * Stops taking calls (they reject with `GUARD_CLOSED`) and waits for running loads to settle.
   * Does not close the filter or the Redis client: they are yours. Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true
    await this.flights.settled()
    this.l1?.clear()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  // --- the read path ---

  private async answer(id: K, key: string, read: CacheRead<V>): Promise<V | null> {
    if (read.kind === 'value') {
      this.counters.cacheHits++
      this.l1?.set(key, { value: read.value })
      return read.value
    }
    if (read.kind === 'absent') {
      this.counters.cachedAbsentHits++
      return null
    }
    const running = this.flights.get(key)
    if (running !== undefined) {
      this.counters.joinedLoads++
      return running
    }
    return this.flights.start(key, (flight) => this.fly(id, key, read.seen, flight))
  }

  /** One load of `id` for every request in this process, and with a locking cache for every process. */
  private async fly(id: K, key: string, seen: string | null, flight: Flight<V>): Promise<V | null> {
    const cache = this.cache
    let token: string | undefined
    if (cache?.lock !== undefined && this.settings.lock) {
      const turn = await awaitTurn(this.lockWait!, key, seen)
      if (turn.kind === 'done') return turn.value
      token = turn.token
      seen = turn.seen
    }
    try {
      const started = Date.now()
      this.counters.loads++
      let value: V | null
      try {
        value = await loadWithin(this.settings.load, id, this.settings.loadTimeout)
      } catch (error) {
        if (error instanceof GuardError && error.code === 'GUARD_LOAD_TIMEOUT') {
          this.counters.loadTimeouts++
          // Waiting gets have their answer now; the lock is released behind them, so another
          // process's next get need not wait out lockWait. `finally` skips its own unlock.
          const held = token
          token = undefined
          if (held !== undefined) {
            this.calls.cacheCall(() => cache!.unlock!(lockKeyOf(this.prefix, key), held), 'cache.unlock', { write: true }).catch(() => this.counters.cacheErrors++)
          }
          throw error
        }
        this.counters.loadErrors++
        throw new GuardError('GUARD_LOAD_FAILED', `load(${describe(id)}) failed: ${messageOf(error)}`, { cause: error, id })
      }
      if (value === null) this.counters.loadedAbsent++
      if (cache !== undefined) {
        const entry = value === null ? ABSENT : VALUE_TAG + this.codec.serialize(id, value)
        if (Date.now() - started < this.fenceMs) {
          const ttl = this.jittered(value === null ? this.settings.nullTtlMs : this.settings.ttlMs)
          const held = token
          if (held !== undefined && cache.setIfAndUnlock !== undefined) {
            // Store and release in one round trip; if it fails, `finally` still tries to unlock.
            await this.calls.cacheCall(() => cache.setIfAndUnlock!(key, entry, ttl, seen, lockKeyOf(this.prefix, key), held), 'cache.setIfAndUnlock', { write: true }).then(
              () => (token = undefined),
              () => this.counters.cacheErrors++,
            )
          } else {
            await this.calls.cacheCall(() => cache.setIf(key, entry, ttl, seen), 'cache.setIf').catch(() => this.counters.cacheErrors++)
          }
        }
      }
      if (value !== null && !flight.stale) this.l1?.set(key, { value })
      return value
    } finally {
      const held = token
      if (held !== undefined) {
        await this.calls.cacheCall(() => cache!.unlock!(lockKeyOf(this.prefix, key), held), 'cache.unlock', { write: true }).catch(() => this.counters.cacheErrors++)
      }
    }
  }

  /** The cache's answers for `keys` in one round trip; a failing cache reads as all misses. */
  private async readCache(keys: string[]): Promise<CacheRead<V>[]> {
    const cache = this.cache
    if (cache === undefined || keys.length === 0) return keys.map(() => ({ kind: 'miss', seen: null }))
    let raws: (string | null)[]
    try {
      raws = await this.calls.cacheCall(() => cache.getMany(keys), 'cache.getMany')
    } catch {
      this.counters.cacheErrors++
      return keys.map(() => ({ kind: 'miss', seen: null }))
    }
    return raws.map((raw) => this.codec.decode(raw))
  }

  // --- writes ---

  /** Replaces the cached entry by a fence, and detaches a running load so later gets load afresh. */
  private async fence(id: K, key: string, what: string): Promise<void> {
    this.flights.detach(key)
    this.l1?.delete(key)
    if (this.cache === undefined) return
    try {
      await this.calls.cacheCall(() => this.cache!.set(key, FENCE_TAG + crypto.randomUUID(), this.fenceMs), 'cache.set', { write: true })
    } catch (error) {
      this.counters.cacheErrors++
      throw new GuardError('GUARD_CACHE_UNAVAILABLE', `${what}(${describe(id)}): the cache could not be updated: ${messageOf(error)}`, { cause: error, id })
    }
  }

  private cacheKey(id: K): string {
    if (typeof id !== 'string' && !(id instanceof Uint8Array && !isDetached(id))) {
      throw new GuardError('GUARD_INVALID_KEY', `a key must be a string or a Uint8Array (whose buffer is not detached); got ${describe(id)}`)
    }
    return cacheKeyOf(this.prefix, id)
  }

  private jittered(ms: number): number {
    return ms * (1 + this.settings.jitter * (2 * Math.random() - 1))
  }

  private checkOpen(): void {
    if (this.closed) throw new GuardError('GUARD_CLOSED', `guard "${this.name}" is closed`)
  }
}
