// The Redis suite: the runner, which starts a throwaway standalone server and a 3-master Cluster and
// hands each part its scale (redis-bench.ts). The parts, one concern each: redis-batches.ts (batches
// of 1000 and single calls, the realistic rows that lead the table), redis-floor.ts (the floor of a
// partial add), redis-replica.ts (replicas), redis-chunks.ts (100k-key chunks and memory per key);
// redis-naive.ts is the naive Lua baseline they measure against, redis-cost.ts times calls.
// The workspace's private test launcher, built by `pnpm run build` (benchmarks/tsconfig.json references it).
import { startRedisCluster, startRedisServer } from '../../test-support/dist/redis-servers.js'
import { Cluster, Redis } from 'ioredis'
import { userKeys, type SuiteOptions } from './measure.js'
import type { Report, Row } from './report.js'
import { FULL, QUICK, type Rows } from './redis-bench.js'
import { measureRealistic } from './redis-batches.js'
import { measureChunks } from './redis-chunks.js'
import { measureReplica, measureReplicaBatches } from './redis-replica.js'

/** Shards of the Cluster filter: four per master, so every master takes a share. */
const CLUSTER_SHARDS = 12

/**
 * The Redis backend on loopback: `addMany`/`hasMany` of 1M keys (k = 7) against a throwaway
 * standalone server and a 3-master Cluster it starts itself, next to the naive Lua baseline
 * measured in the same run, plus Redis's memory per key. Bounded: about a minute.
 */
export async function runRedisBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  const { keys: keyCount, rounds, batchCalls, callsPerCaller } = quick ? QUICK : FULL
  let step = 0
  // Steps: 5 a round and 4 more in the rows of redis-batches.ts, redis-floor.ts and redis-chunks.ts,
  // 4 a round and 4 more in the replica's.
  const progress = (what: string) => report.progress(step++, 9 * rounds + 8, what)
  report.describeChart({
    id: 'redis',
    title: 'Redis: keys per second',
    subtitle: 'batches of 1000 keys with one in flight, and single calls from 1000 callers; bloomkit vs a naive Lua script, standalone and a 3-master Cluster',
  })
  const keys = userKeys(0, keyCount)
  const realistic: Row[] = []
  const chunked: Row[] = []
  const into = (rows: Row[]): Rows => ({ add: (row) => rows.push(row) })
  const scale = { progress, quick, keys, rounds, batchCalls, callsPerCaller }
  const server = await startRedisServer()
  try {
    const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
    try {
      const topology = 'standalone'
      await measureRealistic({ ...scale, rows: into(realistic), redis, topology })
      await measureReplica({ ...scale, rows: into(realistic), redis, topology }, { port: server.port })
      await measureChunks({ ...scale, rows: into(chunked), redis, topology })
    } finally {
      redis.disconnect()
    }
  } finally {
    await server.stop()
  }
  const cluster = await startRedisCluster(3)
  try {
    const client = new Cluster([...cluster.nodes], { redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2000 }, enableOfflineQueue: true })
    try {
      const topology = 'Cluster, 3 masters'
      await measureRealistic({ ...scale, rows: into(realistic), redis: client, topology, shards: CLUSTER_SHARDS })
      await measureReplicaBatches({ ...scale, rows: into(realistic), redis: client, topology, shards: CLUSTER_SHARDS })
      await measureChunks({ ...scale, rows: into(chunked), redis: client, topology, shards: CLUSTER_SHARDS })
    } finally {
      client.disconnect()
    }
  } finally {
    await cluster.stop()
  }
  for (const row of [...realistic, ...chunked]) report.add(row)
}
