// Barriers: catch-ups that calls wait for (docs/SPEC.md 9.13). A call that needs "absent" proven
// waits for a catch-up that began after it did; every call made meanwhile shares the next one, so
// concurrent calls (and a batch's keys) pay one round trip between them. One catch-up runs at a time,
// so that each shard's position only ever moves forward; the follower's go through here too.
import type { ShardGenerations } from '../layout/shard-generations.js'
import { catchUp, FRESH, NOT_READY, RELOAD, type CatchUpResult } from './catch-up.js'
import type { ReplicaShards } from './replica-shards.js'

/** What a barrier came to, for the calls that waited for it. */
export interface BarrierOutcome {
  /** Per shard: FRESH, RELOAD, LOST or NOT_READY (catch-up.ts); 0 for a shard it did not read. */
  readonly status: Uint8Array
  /** Set when the whole barrier failed (the meta's verdict, Redis unreachable): every waiter fails with it. */
  readonly error: unknown
}

/** A call waiting for a barrier. */
export interface BarrierWaiter {
  /**
   * Called once the barrier is over, synchronously after its entries were applied, so that what
   * the caller reads from the bits is what the barrier proved (nothing else runs in between).
   */
  settle(outcome: BarrierOutcome): void
}

/** The barriers of one replica. */
export class Barriers {
  private readonly generations: ShardGenerations
  private readonly replica: ReplicaShards
  private readonly onReload: (shard: number) => void
  /** Shards the next barrier reads (1), and whether any. */
  private readonly wanted: Uint8Array
  private anyWanted = false
  private waiters: BarrierWaiter[] = []
  private running = false
  /** Resolved when the next barrier is over (for the follower, which waits without a waiter of its own). */
  private nextDone: Promise<CatchUpResult | undefined> | undefined
  private resolveNext: ((result: CatchUpResult | undefined) => void) | undefined
  /** Barriers completed (for `status`). */
  completed = 0

  /** @param onReload Called for a shard a barrier found must be loaded again (it is no longer ready). */
  constructor(generations: ShardGenerations, replica: ReplicaShards, onReload: (shard: number) => void) {
    this.generations = generations
    this.replica = replica
    this.onReload = onReload
    this.wanted = new Uint8Array(replica.parameters.shards)
  }

  /** Makes `waiter` wait for the next barrier, which reads `shard` (among others). */
  wait(shard: number, waiter: BarrierWaiter): void {
    this.wanted[shard] = 1
    this.anyWanted = true
    this.waiters.push(waiter)
    this.schedule()
  }

  /** Makes `waiter` wait for the next barrier, which reads every shard flagged in `shards`. */
  waitAll(shards: Uint8Array, waiter: BarrierWaiter): void {
    for (let s = 0; s < shards.length; s++) if (shards[s] === 1) this.wanted[s] = 1
    this.anyWanted = true
    this.waiters.push(waiter)
    this.schedule()
  }

  /** A barrier over every ready shard; resolves with what it found (undefined if it failed). */
  refresh(): Promise<CatchUpResult | undefined> {
    this.wanted.fill(1)
    this.anyWanted = true
    this.schedule()
    return (this.nextDone ??= new Promise((resolve) => (this.resolveNext = resolve)))
  }

  private schedule(): void {
    // Started after the current tick, so that the calls made in it share the barrier.
    if (!this.running) {
      this.running = true
      queueMicrotask(() => void this.run())
    }
  }

  private async run(): Promise<void> {
    while (this.anyWanted) {
      const wanted = Uint8Array.from(this.wanted)
      this.wanted.fill(0)
      this.anyWanted = false
      const waiters = this.waiters
      this.waiters = []
      const resolveNext = this.resolveNext
      this.nextDone = this.resolveNext = undefined
      const { ready } = this.replica
      const list: number[] = []
      const status = new Uint8Array(ready.length)
      for (let s = 0; s < wanted.length; s++) {
        if (wanted[s] === 0) continue
        if (ready[s] === 1) list.push(s)
        else status[s] = NOT_READY
      }
      const began = performance.now()
      let error: unknown = undefined
      let result: CatchUpResult | undefined
      try {
        result = list.length === 0 ? { status, applied: 0 } : await catchUp(this.generations, this.replica, list, 'has')
      } catch (caught) {
        error = caught
      }
      if (result !== undefined) {
        for (const s of list) {
          // A shard an add found stale while this ran is loading: its calls go to Redis.
          const found = ready[s] === 1 ? result.status[s] : NOT_READY
          status[s] = found
          if (found === FRESH) this.replica.verifiedAt[s] = began
          else if (found === RELOAD) {
            ready[s] = 0
            this.onReload(s)
          }
        }
      }
      this.completed++
      const outcome: BarrierOutcome = { status, error }
      for (const waiter of waiters) waiter.settle(outcome)
      resolveNext?.(result === undefined ? undefined : { status, applied: result.applied })
    }
    this.running = false
  }
}
