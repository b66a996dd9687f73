// What the Redis suite's rows cost: throughput of timed calls, and the client's and Redis's CPU per
// key around them (INFO cpu, summed over a Cluster's masters). Shared by the Redis suite's parts
// (redis-batches.ts, redis-chunks.ts, redis-floor.ts, redis-replica.ts).
import { Cluster, type Redis } from 'ioredis'
import { median } from './measure.js'

/** The benchmark's own ioredis clients (it reads INFO and KEYS, beyond what the backend needs). */
export type RedisClient = Redis | Cluster

/** Redis's CPU seconds so far (user + sys from INFO), summed over every master. */
export async function serverCpuSeconds(redis: RedisClient): Promise<number> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis]
  let seconds = 0
  for (const node of nodes) {
    const info = await node.info('cpu')
    seconds += Number(/used_cpu_user:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)![1])
  }
  return seconds
}

/** Throughput (keys/s, from the median call), and client and server CPU per key over the run. */
export interface Cost {
  readonly opsPerSecond: number
  readonly clientUs: number
  readonly serverUs: number
}

/** Times `calls` sequential calls of `body`, each handling `keysPerCall` keys (one call in flight). */
export async function timeCalls(redis: RedisClient, keysPerCall: number, calls: number, body: (i: number) => Promise<unknown>, warmup = 10): Promise<Cost> {
  for (let i = 0; i < warmup; i++) await body(i)
  const durations: number[] = []
  const server = await serverCpuSeconds(redis)
  const client = process.cpuUsage()
  for (let i = 0; i < calls; i++) {
    const start = performance.now()
    await body(i)
    durations.push(performance.now() - start)
  }
  const used = process.cpuUsage(client)
  const serverUs = ((await serverCpuSeconds(redis)) - server) * 1e6
  const keys = keysPerCall * calls
  return { opsPerSecond: keysPerCall / (median(durations) / 1000), clientUs: (used.user + used.system) / keys, serverUs: serverUs / keys }
}

export const cpuNote = (cost: Cost) => `client ${cost.clientUs.toFixed(2)} µs/key, server ${cost.serverUs.toFixed(2)} µs/key`

/** The median of each field over rounds. */
export function medianCost(costs: Cost[]): Cost {
  return { opsPerSecond: median(costs.map((c) => c.opsPerSecond)), clientUs: median(costs.map((c) => c.clientUs)), serverUs: median(costs.map((c) => c.serverUs)) }
}

