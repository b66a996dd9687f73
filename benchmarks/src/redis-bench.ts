// What every part of the Redis suite shares: its scale (a full or a quick run), where its rows and
// progress go, the client and topology it measures, and the figures both its filters and the naive
// baseline are sized by. redis.ts makes one per topology and hands it to each part.
import type { RedisClient } from './redis-cost.js'
import type { Row } from './report.js'

/** Keys in the filters; rounds; calls per timed run of a 1000-key row; calls per single-call caller. */
export interface RedisScale {
  readonly keys: number
  readonly rounds: number
  readonly batchCalls: number
  readonly callsPerCaller: number
}

/** A full run's scale. */
export const FULL: RedisScale = { keys: 1_000_000, rounds: 3, batchCalls: 100, callsPerCaller: 30 }
/** A quick run's scale (`--quick`). */
export const QUICK: RedisScale = { keys: 200_000, rounds: 1, batchCalls: 30, callsPerCaller: 10 }

/** The error rate of every filter of the suite (k = 7). */
export const ERROR_RATE = 0.01
/** Keys per call of the 100k-key rows, and per fill call. */
export const CHUNK = 100_000
/** The batch services send: 1000 keys per call, one call in flight. */
export const BATCH = 1000
/** Concurrent single-key callers. */
export const CALLERS = 1000

/** Rows gathered before they go to the report, so that the realistic ones lead the table. */
export type Rows = { add(row: Row): void }

/** What redis.ts hands each part of the suite: its scale, and where its rows and progress go. */
export interface RedisBench {
  readonly rows: Rows
  readonly progress: (what: string) => void
  readonly redis: RedisClient
  /** 'standalone' or 'Cluster, 3 masters', as the suite's rows name it. */
  readonly topology: string
  /** Shards of the suite's filter (the Cluster's spreads over the masters); default: as create picks. */
  readonly shards?: number
  readonly quick: boolean
  /** Keys in the filters (1M; 200k in a quick run), the suite's own. */
  readonly keys: readonly string[]
  readonly rounds: number
  /** Timed calls per round of a 1000-key row. */
  readonly batchCalls: number
  /** Calls each of the {@link CALLERS} concurrent callers makes. */
  readonly callsPerCaller: number
}
