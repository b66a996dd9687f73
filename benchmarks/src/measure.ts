import { Bench } from 'tinybench'
import type { Report } from './report.js'

/**
 * What main.ts passes every suite (the contract for a new suite: benchmarks/README.md).
 */
export interface SuiteOptions {
  /**
   * `npm run bench -- --quick`: all suites together in about a minute, for a first look. A suite
   * keeps its tasks but takes fewer rounds, keys or sizes; its rows still name what actually ran
   * (say `add 200k`, not `add 1M`). Quick results go to benchmarks/quick/, never to RESULTS.md.
   */
  readonly quick: boolean
  /**
   * Set in the runtime table's child processes (runtimes.ts), which keep only bloomkit's hot rows
   * (hashing; memory has and hasMany): a suite may skip what no such row needs (the memory suite
   * skips bloom-filters and its 100M-key filter), and must measure the rows it keeps as it always does.
   */
  readonly forRuntimeTable?: boolean
}

/** A benchmark suite: measures, and adds rows (and the charts they go into) to the report. */
export type Suite = (report: Report, options: SuiteOptions) => Promise<void>

/** How long tinybench samples each task, in ms; BENCH_TIME_MS shortens a trial run. */
let sampleTimeMs = Number(process.env.BENCH_TIME_MS ?? 1000)

/** A quick run (`--quick`) samples each task for 250 ms (or BENCH_TIME_MS) instead of a second. */
export function sampleQuickly(): void {
  sampleTimeMs = Number(process.env.BENCH_TIME_MS ?? 250)
}

/**
 * Median throughput of `body`, which handles `opsPerCall` operations (keys) per call.
 * tinybench times each call; the median call time converts to operations per second.
 */
export async function medianOpsPerSecond(
  name: string,
  opsPerCall: number,
  body: () => unknown,
  options: { time?: number; iterations?: number; warmup?: boolean } = {},
): Promise<number> {
  const bench = new Bench({
    time: options.time ?? sampleTimeMs,
    iterations: options.iterations ?? 5,
    warmup: options.warmup ?? true,
    warmupTime: 100,
    warmupIterations: 2,
  })
  bench.add(name, body)
  await bench.run()
  const result = bench.tasks[0].result
  if (result.state !== 'completed') throw new Error(`benchmark ${name} did not complete: ${result.state} ${'error' in result ? String(result.error) : ''}`)
  return opsPerCall / (result.latency.p50 / 1000)
}

/** Keys `user:<from> … user:<to − 1>`. */
export function userKeys(from: number, to: number): string[] {
  // Pushed, not preallocated: `new Array(n)` for a large n gives a dictionary-mode array, whose
  // every read is a hash lookup (it made the whole memory suite 3–4× slower).
  const keys: string[] = []
  for (let i = from; i < to; i++) keys.push(`user:${i}`)
  return keys
}

/** A xorshift32 stream from `seed`, as unsigned 32-bit integers: the same sequence every run. */
export function xorshift32(seed: number): () => number {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return state >>> 0
  }
}

/**
 * `count` keys `user:<i>`, i drawn uniformly from [from, to) by a xorshift32 seeded with `seed`: the
 * order of real traffic. Each string is made in that order, so memory order is access order too.
 */
export function randomUserKeys(from: number, to: number, count: number, seed: number): string[] {
  const next = xorshift32(seed)
  const keys: string[] = []
  for (let i = 0; i < count; i++) keys.push(`user:${from + Math.floor((next() / 4294967296) * (to - from))}`)
  return keys
}

/** Splits `keys` into consecutive chunks of `size`. */
export function chunks<T>(keys: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < keys.length; i += size) out.push(keys.slice(i, i + size))
  return out
}

/** A cycling cursor over chunks, so each timed call works on the next chunk. */
export function cycle<T>(items: readonly T[]): () => T {
  let i = 0
  return () => items[i++ % items.length]
}

export function ratio(ours: number, theirs: number): string {
  return `${(ours / theirs).toFixed(2)}×`
}

/** The median of a few samples (the upper one of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** 1 000 000 → '1M', 200 000 → '200k': the size label rows and charts use. */
export function sizeLabel(n: number): string {
  return n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`
}
