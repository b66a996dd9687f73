import type { GuardCache } from './cache.js'
import { lockKeyOf, type CacheRead } from './entries.js'
import { sleep } from './timing.js'
import type { CacheCallOptions } from './guarded-calls.js'

/** One running load of a key, shared by every request for it in this process. */
export interface Flight<V> {
  promise: Promise<V | null>
  /** Set by `created`/`invalidate`: the result may predate the write, so it is not cached in L1. */
  stale: boolean
}

/** The running loads of this process, by cache key: a request for a key being loaded joins the load. */
export class Flights<V> {
  private readonly running = new Map<string, Flight<V>>()

  /** The running load of `key`, if any. */
  get(key: string): Promise<V | null> | undefined {
    return this.running.get(key)?.promise
  }

  /** Starts `run` as the load of `key`; it leaves the map when it settles (unless detached meanwhile). */
  start(key: string, run: (flight: Flight<V>) => Promise<V | null>): Promise<V | null> {
    const flight: Flight<V> = { promise: undefined as unknown as Promise<V | null>, stale: false }
    flight.promise = run(flight).finally(() => {
      if (this.running.get(key) === flight) this.running.delete(key)
    })
    this.running.set(key, flight)
    return flight.promise
  }

  /** Marks the running load of `key` stale and detaches it, so later requests load afresh. */
  detach(key: string): void {
    const running = this.running.get(key)
    if (running !== undefined) {
      running.stale = true
      this.running.delete(key)
    }
  }

  /** Settles once every load running now has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((flight) => flight.promise))
  }
}

const LOCK_POLL_FIRST_MS = 5
const LOCK_POLL_MAX_MS = 50

/** What the lock wait needs from the guard: its cache, lock settings, counters and cache calls. */
export interface LockWait<V> {
  /** A cache with `lock`/`unlock` (and maybe `lockAndGet`). */
  cache: GuardCache
  /** The guard's key prefix (its escaped name). */
  prefix: string
  lockTtl: number
  lockWait: number
  counters: { cacheErrors: number; sharedLoads: number; lockTimeouts: number }
  cacheCall<T>(call: () => Promise<T>, what: string, options?: CacheCallOptions): Promise<T>
  readCache(keys: string[]): Promise<CacheRead<V>[]>
  decode(raw: string | null | undefined): CacheRead<V>
}

/** The outcome of {@link awaitTurn}: another process's result, or this process's turn to load. */
export type Turn<V> = { kind: 'done'; value: V | null } | { kind: 'load'; token: string | undefined; seen: string | null }

/**
 * Takes the key's lock, or waits (polling the cache, bounded by `lockWait`) for the process that
 * holds it to cache its result. A failing cache or a wait that runs out lets this process load.
 */
export async function awaitTurn<V>(guard: LockWait<V>, key: string, seen: string | null): Promise<Turn<V>> {
  const cache = guard.cache
  const lockKey = lockKeyOf(guard.prefix, key)
  const token = crypto.randomUUID()
  const deadline = Date.now() + guard.lockWait
  let delay = LOCK_POLL_FIRST_MS
  for (;;) {
    let locked: boolean
    let read: CacheRead<V> | undefined
    try {
      if (cache.lockAndGet !== undefined) {
        // The lock and a read of the entry in one round trip: the read tells a waiter at once
        // whether another process has already cached the result.
        const answer = await guard.cacheCall(() => cache.lockAndGet!(lockKey, token, guard.lockTtl, key), 'cache.lockAndGet')
        locked = answer.locked
        read = guard.decode(answer.value)
      } else {
        locked = await guard.cacheCall(() => cache.lock!(lockKey, token, guard.lockTtl), 'cache.lock')
        // The lock may be free because another process just finished this load: read again
        // (one GET on a path about to hit the database) rather than load a second time.
        if (locked) [read] = await guard.readCache([key])
      }
    } catch {
      guard.counters.cacheErrors++
      return { kind: 'load', token: undefined, seen }
    }
    if (locked) {
      if (read!.kind === 'miss') return { kind: 'load', token, seen: read!.seen }
      await guard.cacheCall(() => cache.unlock!(lockKey, token), 'cache.unlock', { write: true }).catch(() => guard.counters.cacheErrors++)
    }
    if (read !== undefined && read.kind !== 'miss') {
      guard.counters.sharedLoads++
      return { kind: 'done', value: read.kind === 'value' ? read.value : null }
    }
    if (read !== undefined) seen = read.seen
    const left = deadline - Date.now()
    if (left <= 0) {
      guard.counters.lockTimeouts++
      return { kind: 'load', token: undefined, seen }
    }
    await sleep(Math.min(delay, left))
    delay = Math.min(delay * 2, LOCK_POLL_MAX_MS)
    if (cache.lockAndGet !== undefined) continue // the next try reads as it locks
    ;[read] = await guard.readCache([key])
    if (read.kind !== 'miss') {
      guard.counters.sharedLoads++
      return { kind: 'done', value: read.kind === 'value' ? read.value : null }
    }
    seen = read.seen
  }
}
