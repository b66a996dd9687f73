// The replica lag row of the Redis suite (issue 35): how long after a writer's add was acknowledged
// a replica in another process shows the key from its own bits, while several writer processes add
// at a fixed total rate. The replica is bounded with the longest maxStaleness, so that its `has`
// is a pure look at its bits (no barrier): what it shows is what its follower has applied.
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { median } from './measure.js'
import { serverCpuSeconds, type RedisClient } from './redis-cost.js'
import type { WriterMessage, WriterOrder } from './redis-replica-writer.js'

/** Writer processes, and the keys each adds per call and per second (4 × 25k = 100k keys/s, the load). */
export const LAG_WRITERS = 4
export const LAG_BATCH = 250
const LAG_KEYS_PER_SECOND_PER_WRITER = 25_000
/** The longest bounded window (replica.maxStaleness's maximum): answers never wait for a barrier. */
const LOOK_ONLY_STALENESS = 3_600_000
/** How often the parent looks for the keys it was told of (ms): the lag's resolution. */
const LOOK_EVERY_MS = 0.5
/** A key the replica has not shown this long after its add fails the row (ms). */
const GIVE_UP_MS = 10_000

/** What the lag row found. */
export interface Lag {
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly samples: number
  /** Keys the writers added per second, all together. */
  readonly keysPerSecond: number
  /** Redis CPU, the writers' CPU and the replica process's CPU, per key added (µs). */
  readonly serverUs: number
  readonly writersUs: number
  readonly replicaUs: number
}

const writerPath = fileURLToPath(new URL('./redis-replica-writer.js', import.meta.url))
const wallClock = () => performance.timeOrigin + performance.now()

/**
 * Starts {@link LAG_WRITERS} writer processes on `name` (a fixed filter with a feed), opens a
 * replica of it here, lets them add for `durationMs` and times, for each acknowledged batch, how
 * long until the replica shows its last key.
 */
export async function measureLag(redis: RedisClient, port: number, name: string, durationMs: number): Promise<Lag> {
  const writers = await Promise.all(Array.from({ length: LAG_WRITERS }, () => startWriter(port, name)))
  const replica = await RedisBloomFilter.open(redis, name, { kind: 'fixed', replica: { maxStaleness: LOOK_ONLY_STALENESS } })
  try {
    const waiting: Array<{ key: string; at: number }> = []
    const lags: number[] = []
    let keys = 0
    let writersCpuUs = 0
    let done = 0
    let failure: Error | undefined
    const allDone = new Promise<void>((resolve) => {
      for (const writer of writers) {
        writer.on('message', (message: WriterMessage) => {
          if (message.type === 'added') waiting.push({ key: message.key, at: message.at })
          else if (message.type === 'done') {
            keys += message.keys
            writersCpuUs += message.cpuUs
            if (++done === writers.length) resolve()
          }
        })
      }
    })
    // Looks at the replica's bits for every key a writer reported, every LOOK_EVERY_MS.
    const look = async () => {
      while (done < writers.length || waiting.length > 0) {
        const now = wallClock()
        for (let i = 0; i < waiting.length; ) {
          const { key, at } = waiting[i]
          if (await replica.has(key)) {
            lags.push(wallClock() - at)
            waiting.splice(i, 1)
          } else if (now - at > GIVE_UP_MS) {
            failure = new Error(`redis replica lag: ${key} not shown ${GIVE_UP_MS} ms after its add`)
            return
          } else i++
        }
        await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS))
      }
    }
    const server = await serverCpuSeconds(redis)
    const cpu = process.cpuUsage()
    const start = performance.now()
    const order: WriterOrder = { type: 'go', batch: LAG_BATCH, intervalMs: (1000 * LAG_BATCH) / LAG_KEYS_PER_SECOND_PER_WRITER, durationMs, prefix: '' }
    writers.forEach((writer, index) => writer.send({ ...order, prefix: `lag:${index}` }))
    const looking = look()
    await allDone
    const elapsed = (performance.now() - start) / 1000
    await looking
    if (failure !== undefined) throw failure
    const used = process.cpuUsage(cpu)
    const serverUs = ((await serverCpuSeconds(redis)) - server) * 1e6
    lags.sort((a, b) => a - b)
    return {
      p50Ms: median(lags),
      p99Ms: lags[Math.floor(lags.length * 0.99)],
      maxMs: lags[lags.length - 1],
      samples: lags.length,
      keysPerSecond: keys / elapsed,
      serverUs: serverUs / keys,
      writersUs: writersCpuUs / keys,
      replicaUs: (used.user + used.system) / keys,
    }
  } finally {
    await replica.close()
    for (const writer of writers) if (writer.exitCode === null) writer.kill()
  }
}

/** Forks one writer and waits until it has opened the filter. */
function startWriter(port: number, name: string): Promise<ChildProcess> {
  const child = fork(writerPath, [String(port), name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`redis replica lag: a writer exited with ${code} before it was ready`)))
    child.once('message', () => resolve(child))
  })
}
