import type { Suite } from './measure.js'

/**
 * The suites, in the order a full run takes them; add a suite with one line.
 * Each module is loaded only when its turn comes: merely importing ioredis halved the memory suite's
 * throughput (bloomkit's and bloomfilter's alike) in this process. The memory suite goes first, as in
 * a process with one kind of key: the hashing suite feeds the same hash function strings of every
 * length and shape and Uint8Arrays, and V8's feedback from that cost bloomkit ~20 % in a memory suite
 * run after it. The runtime table goes last: it runs the hot suites again, each in a child process of
 * every Node of scripts/runtimes/runtimes.mjs, while this process waits.
 */
export const suites: Record<string, () => Promise<Suite>> = {
  memory: async () => (await import('./memory.js')).runMemoryBenchmarks,
  hashing: async () => (await import('./hashing.js')).runHashingBenchmarks,
  level: async () => (await import('./level.js')).runLevelBenchmarks,
  redis: async () => (await import('./redis.js')).runRedisBenchmarks,
  cli: async () => (await import('./cli.js')).runCliBenchmarks,
  guard: async () => (await import('./guard.js')).runGuardBenchmarks,
  layered: async () => (await import('./layered.js')).runLayeredBenchmarks,
  counting: async () => (await import('./counting.js')).runCountingBenchmarks,
  accuracy: async () => (await import('./accuracy.js')).runAccuracyBenchmarks,
  runtimes: async () => (await import('./runtimes.js')).runRuntimeTable,
}

/**
 * Suites that a quick run of every suite (`npm run bench -- --quick`) leaves out; name one to run it
 * quickly (`--quick runtimes`). The runtime table runs the hot suites once per Node line, which
 * would double a quick run (~20 s of CPU a line).
 */
export const notInQuickRuns: ReadonlySet<string> = new Set(['runtimes'])
