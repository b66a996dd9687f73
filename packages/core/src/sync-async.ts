import type { Outcome } from './bit-store.js'

/**
 * The one place that knows whether a filter's store answers with plain values or with Promises
 * (unstorage's `asyncCall` does the same job). A filter's methods are written once, in terms of
 * these four operations; the sync driver runs them as plain calls and loops (no Promise, no
 * allocation), the async one turns a throw into a rejection and chains on Promises.
 */
export interface SyncAsync<Sync extends boolean> {
  /** Whether results are plain values. */
  readonly sync: Sync
  /**
   * Runs `body`. Sync: returns or throws what it does. Async: always a Promise; a throw in `body`
   * becomes a rejection, so a caller never has to catch synchronously.
   */
  call<T>(body: () => T | Promise<T>): Outcome<Sync, T>
  /** Carries a store's result on: sync, `next(value)` now; async, once `value` resolves. */
  then<T, R>(value: T | Promise<T>, next: (value: T) => R | Promise<R>): Outcome<Sync, R>
  /**
   * Runs `step` on each item in order. Sync: a plain loop. Async: each step's Promise settles
   * before the next step starts, and the first rejection ends the loop.
   */
  forEach<T>(items: Iterable<T>, step: (item: T) => unknown): Outcome<Sync, void>
  /**
   * Runs `send` on each item and `settle` on what it returned, in order. Sync: one after the other.
   * Async: keeps two in flight, so the store works on one item while the next one is prepared;
   * `settle` still runs in order, and nothing is left unobserved if one rejects.
   */
  pipeline<T, S>(items: Iterable<T>, send: (item: T) => S | Promise<S>, settle: (sent: S) => void): Outcome<Sync, void>
  /** The error as the method's result: sync, thrown; async, a rejected Promise. */
  fail(error: unknown): Outcome<Sync, never>
  /**
   * Scratch space for one call. Sync: `shared()`, since no two calls overlap. Async: `fresh()`,
   * since calls may overlap and each needs its own.
   */
  scratch<T>(shared: () => T, fresh: () => T): T
}

const syncDriver: SyncAsync<true> = {
  sync: true,
  call: (body) => body() as never,
  then: (value, next) => next(value as never) as never,
  forEach(items, step) {
    for (const item of items) step(item)
  },
  pipeline(items, send, settle) {
    for (const item of items) settle(send(item) as never)
  },
  fail(error) {
    throw error
  },
  scratch: (shared) => shared(),
}

const asyncDriver: SyncAsync<false> = {
  sync: false,
  call(body) {
    try {
      return Promise.resolve(body())
    } catch (error) {
      return Promise.reject(error)
    }
  },
  then: (value, next) => Promise.resolve(value).then(next),
  async forEach(items, step) {
    for (const item of items) await step(item)
  },
  async pipeline(items, send, settle) {
    let pending: Promise<unknown> | undefined
    let previous: Promise<unknown> = Promise.resolve()
    try {
      for (const item of items) {
        const sent = Promise.resolve(send(item))
        // Observed now, so a rejection while the previous item is awaited is not "unhandled".
        sent.catch(() => {})
        await previous
        pending = sent
        previous = sent.then(settle)
      }
      await previous
    } finally {
      pending?.catch(() => {})
      previous.catch(() => {})
    }
  },
  fail: (error) => Promise.reject(error),
  scratch: (_shared, fresh) => fresh(),
}

/** The driver for a store whose `capabilities.sync` is `sync`. */
export function syncAsync<Sync extends boolean>(sync: Sync): SyncAsync<Sync> {
  return (sync ? syncDriver : asyncDriver) as SyncAsync<boolean> as SyncAsync<Sync>
}

/** The driver for an operation over two filters: sync only when both are. */
export function syncAsyncOfBoth<A extends boolean, B extends boolean>(a: SyncAsync<A>, b: SyncAsync<B> | undefined): SyncAsync<A extends true ? B : false> {
  return syncAsync(a.sync && b?.sync === true) as SyncAsync<boolean> as SyncAsync<A extends true ? B : false>
}
