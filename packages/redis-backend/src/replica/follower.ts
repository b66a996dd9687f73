// The follower keeps a replica warm between calls (docs/SPEC.md 9.13); correctness never rests on
// it, only on barriers. On a standalone server it waits on every loaded shard's feed at once with
// XREAD BLOCK over a connection of its own, and on any news runs a barrier (XREAD's entries are not
// applied: it reads from an ID without proving that the entry the replica stands on still exists,
// which only a catch-up does). A Cluster refuses XREAD across slots, so there it polls: a barrier
// over every loaded shard, again soon while entries arrive, less often while none do.
import type { ShardGenerations } from '../layout/shard-generations.js'
import { isCluster } from '../wire/client.js'
import type { Barriers } from './barriers.js'
import type { ReplicaShards } from './replica-shards.js'

/** The longest a follower goes without a catch-up when nothing arrives (ms): stale "present" answers after a reset last at most about this long. */
export const IDLE_CATCH_UP_MS = 1000
/** The Cluster poll's shortest interval (ms), while entries arrive. */
const POLL_MIN_MS = 1
/** After a failure (Redis unreachable), how long the follower waits before it tries again (ms). */
const RETRY_MS = 200

/** The part of an ioredis client the follower uses for its own connection. */
interface Duplicable {
  duplicate(options?: object): BlockingConnection
}

interface BlockingConnection {
  callBuffer(command: string, ...args: Array<string | number | Buffer>): Promise<unknown>
  on(event: string, listener: (...args: unknown[]) => void): unknown
  disconnect(): void
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.())

/** Runs until {@link stop}: XREAD BLOCK (standalone) or polling (Cluster), each followed by a barrier. */
export class Follower {
  private readonly generations: ShardGenerations
  private readonly replica: ReplicaShards
  private readonly barriers: Barriers
  /** The longest wait between catch-ups (ms): {@link IDLE_CATCH_UP_MS}, or less in bounded mode. */
  private readonly idleMs: number
  private connection: BlockingConnection | undefined
  private stopped = false
  /** Follower rounds that woke to news (for `status`). */
  wakeUps = 0

  constructor(generations: ShardGenerations, replica: ReplicaShards, barriers: Barriers, idleMs: number) {
    this.generations = generations
    this.replica = replica
    this.barriers = barriers
    this.idleMs = idleMs
  }

  start(): void {
    void (isCluster(this.generations.client) ? this.poll() : this.follow())
  }

  stop(): void {
    this.stopped = true
    this.connection?.disconnect()
    this.connection = undefined
  }

  private async follow(): Promise<void> {
    const { names } = this.generations
    while (!this.stopped) {
      const shards = this.replica.readyShards()
      if (shards.length === 0) {
        await sleep(this.idleMs)
        continue
      }
      let news = false
      try {
        const connection = (this.connection ??= this.open())
        // The positions' IDs: XREAD answers entries after them, at once or when one arrives.
        const ids = shards.map((shard) => this.replica.positions[shard]!.id)
        const reply = await connection.callBuffer('XREAD', 'COUNT', 1, 'BLOCK', this.idleMs, 'STREAMS', ...shards.map((shard) => names.feed(shard)), ...ids)
        news = reply !== null
      } catch {
        if (this.stopped) return
        await sleep(RETRY_MS)
        continue
      }
      if (this.stopped) return
      if (news) this.wakeUps++
      if ((await this.barriers.refresh()) === undefined) await sleep(RETRY_MS)
    }
  }

  private async poll(): Promise<void> {
    let interval = POLL_MIN_MS
    while (!this.stopped) {
      await sleep(interval)
      if (this.stopped) return
      const result = await this.barriers.refresh()
      if (result === undefined) interval = RETRY_MS
      else if (result.applied > 0) {
        this.wakeUps++
        interval = POLL_MIN_MS
      } else interval = Math.min(this.idleMs, interval * 2)
    }
  }

  private open(): BlockingConnection {
    // A connection of its own: XREAD BLOCK holds it, and the user's client must stay free.
    const connection = (this.generations.client as unknown as Duplicable).duplicate()
    connection.on('error', () => {})
    return connection
  }
}
