import { createKeyHasher, shardBitsOf } from '@bloomkit/core/store'
import { fillPositions } from '@bloomkit/core/spec'
import { sizeFilter } from '@bloomkit/core'
import { RedisBloomFilter, type RedisClient } from '@bloomkit/redis-backend'
// The workspace's private test launcher, built by `pnpm run build` (benchmarks/tsconfig.json references it).
import { startRedisCluster, startRedisServer } from '../../test-support/dist/redis-servers.js'
import { Cluster, Redis } from 'ioredis'
import { loadavg } from 'node:os'
import { chunks, cycle, median, medianOpsPerSecond, ratio, userKeys } from './measure.js'
import type { Report } from './report.js'

const KEYS = 1_000_000
const ERROR_RATE = 0.01 // k = 7
const CHUNK = 100_000
/** The naive baseline's batch: one Lua call per 1000 keys, offsets as decimal ARGV. */
const NAIVE_BATCH = 1000
/** Naive calls kept in flight, so the baseline is pipelined too and not a strawman. */
const NAIVE_IN_FLIGHT = 8
/** Shards of the Cluster filter: four per master, so every master takes a share. */
const CLUSTER_SHARDS = 12
/** Alternating rounds of bloomkit and baseline measurements. */
const ROUNDS = 3


const NAIVE_ADD = `
local new = {}
local k = tonumber(ARGV[1])
for i = 0, (#ARGV - 1) / k - 1 do
  local n = 0
  for j = 2 + i * k, 1 + (i + 1) * k do
    if redis.call('SETBIT', KEYS[1], ARGV[j], 1) == 0 then n = 1 end
  end
  new[i + 1] = n
end
return new`

const NAIVE_HAS = `
local found = {}
local k = tonumber(ARGV[1])
for i = 0, (#ARGV - 1) / k - 1 do
  local f = 1
  for j = 2 + i * k, 1 + (i + 1) * k do
    if redis.call('GETBIT', KEYS[1], ARGV[j]) == 0 then f = 0 break end
  end
  found[i + 1] = f
end
return found`

/** The baseline a user would write first: one string key, one EVALSHA per 1000 keys with decimal offsets. */
async function naiveBaseline(redis: RedisClient, key: string) {
  const parameters = sizeFilter({ capacity: KEYS, errorRate: ERROR_RATE, shards: 1 })
  const hasher = await createKeyHasher(parameters.seed)
  const bits = shardBitsOf(parameters)
  const positions = new Uint32Array(parameters.hashes)
  // defineCommand sends EVALSHA and falls back to EVAL once per node (NOSCRIPT), as users do.
  redis.defineCommand('naiveAdd', { numberOfKeys: 1, lua: NAIVE_ADD })
  redis.defineCommand('naiveHas', { numberOfKeys: 1, lua: NAIVE_HAS })
  const scripts = redis as unknown as Record<'naiveAdd' | 'naiveHas', (...args: (string | number)[]) => Promise<number[]>>
  const call = (script: 'naiveAdd' | 'naiveHas', keys: readonly string[]) => {
    const args: (string | number)[] = [parameters.hashes]
    for (const key of keys) {
      hasher.hash(key)
      fillPositions(hasher.a, hasher.b, bits, parameters.hashes, positions, 0)
      for (const p of positions) args.push(p)
    }
    return scripts[script](key, ...args)
  }
  const run = async (script: 'naiveAdd' | 'naiveHas', keys: readonly string[]) => {
    const batches = chunks(keys, NAIVE_BATCH)
    let next = 0
    const worker = async () => {
      while (next < batches.length) await call(script, batches[next++])
    }
    await Promise.all(Array.from({ length: NAIVE_IN_FLIGHT }, worker))
  }
  return { add: (keys: readonly string[]) => run('naiveAdd', keys), has: (keys: readonly string[]) => run('naiveHas', keys) }
}

async function memoryPerKey(redis: RedisClient, filter: RedisBloomFilter): Promise<string> {
  // The shard keys, found as a user would: by the documented name pattern `<name>:<shard>:{<tag>}`.
  let bytes = 0
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis]
  for (const node of nodes) {
    for (const key of await node.keys(`${filter.name}:*:{*}`)) {
      if (/^\d+:\{/.test(key.slice(filter.name.length + 1))) bytes += Number(await node.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'))
    }
  }
  const ideal = -Math.log(ERROR_RATE) / (Math.LN2 * Math.LN2)
  return `Redis MEMORY USAGE ${((bytes * 8) / KEYS).toFixed(2)} bits/key (${(bytes / 2 ** 20).toFixed(2)} MiB), ideal ${ideal.toFixed(2)} bits/key`
}

async function measure(report: Report, redis: RedisClient, topology: string, shards: number | undefined, keys: string[]): Promise<void> {
  const name = `bench:${topology}:${process.pid}`
  await RedisBloomFilter.destroy(redis, name)
  const filter = await RedisBloomFilter.create(redis, name, { capacity: KEYS, errorRate: ERROR_RATE, shards })
  // The same filter through a store that always sends BITFIELDs (as a batch spread thinly over
  // large shards does), so both mechanisms are measured in the same run.
  const perBit = await RedisBloomFilter.open(redis, name, { scanBytesPerKey: 0 })
  const keyChunks = chunks(keys, CHUNK)
  const start = performance.now()
  await filter.addMany(keys)
  const fillRate = KEYS / ((performance.now() - start) / 1000)
  const addChunk = cycle(keyChunks)
  const hasChunk = cycle(keyChunks)
  const naiveKey = `bench:naive:${topology}:${process.pid}`
  await redis.del(naiveKey)
  const naive = await naiveBaseline(redis, naiveKey)
  await naive.add(keys)
  // Rounds alternate between bloomkit and the baseline, so that load from other processes on a
  // shared machine hits both alike; each figure is the median of the rounds' medians.
  const loadBefore = loadavg()[0]
  const rounds = { add: [] as number[], has: [] as number[], perBitAdd: [] as number[], perBitHas: [] as number[], naiveAdd: [] as number[], naiveHas: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    rounds.add.push(await medianOpsPerSecond(`redis ${topology} addMany`, CHUNK, () => filter.addMany(addChunk())))
    rounds.perBitAdd.push(await medianOpsPerSecond(`redis ${topology} addMany, BITFIELD only`, CHUNK, () => perBit.addMany(addChunk())))
    rounds.naiveAdd.push(await medianOpsPerSecond(`naive ${topology} add`, CHUNK, () => naive.add(addChunk()), { iterations: 2, time: 0 }))
    rounds.has.push(await medianOpsPerSecond(`redis ${topology} hasMany`, CHUNK, () => filter.hasMany(hasChunk())))
    rounds.perBitHas.push(await medianOpsPerSecond(`redis ${topology} hasMany, BITFIELD only`, CHUNK, () => perBit.hasMany(hasChunk())))
    rounds.naiveHas.push(await medianOpsPerSecond(`naive ${topology} has`, CHUNK, () => naive.has(hasChunk()), { iterations: 2, time: 0 }))
  }
  const load = `machine load ${loadBefore.toFixed(1)}→${loadavg()[0].toFixed(1)}`
  const add = median(rounds.add)
  const has = median(rounds.has)
  const perBitAdd = median(rounds.perBitAdd)
  const perBitHas = median(rounds.perBitHas)
  const naiveAdd = median(rounds.naiveAdd)
  const naiveHas = median(rounds.naiveHas)
  const found = (await filter.hasMany(keys)).every(Boolean) && (await perBit.hasMany(keys)).every(Boolean)
  if (!found) throw new Error(`redis ${topology}: a key added is missing`)
  const memory = await memoryPerKey(redis, filter)
  await perBit.close()
  await filter.destroy()
  await redis.del(naiveKey)

  const { hashes } = filter.parameters
  const shape = `k=${hashes}, ${filter.parameters.shards} shard(s)`
  report.add({ suite: 'redis', task: `addMany 1M (${topology})`, subject: 'bloomkit', opsPerSecond: add, notes: `${shape}; first fill ${(fillRate / 1e3).toFixed(0)} k/s; ${ratio(add, naiveAdd)} naive; ${memory}` })
  report.add({ suite: 'redis', task: `addMany 1M (${topology})`, subject: 'bloomkit, BITFIELD only (scanBytesPerKey: 0)', opsPerSecond: perBitAdd, notes: `${ratio(perBitAdd, naiveAdd)} naive` })
  report.add({ suite: 'redis', task: `addMany 1M (${topology})`, subject: 'naive Lua, 1000 keys/call, decimal ARGV', opsPerSecond: naiveAdd, notes: `${NAIVE_IN_FLIGHT} calls in flight, 1 key` })
  report.add({ suite: 'redis', task: `hasMany 1M (${topology})`, subject: 'bloomkit', opsPerSecond: has, notes: `${shape}; ${ratio(has, naiveHas)} naive; ${load}` })
  report.add({ suite: 'redis', task: `hasMany 1M (${topology})`, subject: 'bloomkit, BITFIELD only (scanBytesPerKey: 0)', opsPerSecond: perBitHas, notes: `${ratio(perBitHas, naiveHas)} naive` })
  report.add({ suite: 'redis', task: `hasMany 1M (${topology})`, subject: 'naive Lua, 1000 keys/call, decimal ARGV', opsPerSecond: naiveHas, notes: `${NAIVE_IN_FLIGHT} calls in flight, 1 key` })
}

/**
 * The Redis backend on loopback: `addMany`/`hasMany` of 1M keys (k = 7) against a throwaway
 * standalone server and a 3-master Cluster it starts itself, next to the naive Lua baseline
 * measured in the same run, plus Redis's memory per key. Bounded: about a minute.
 */
export async function runRedisBenchmarks(report: Report): Promise<void> {
  const keys = userKeys(0, KEYS)
  const server = await startRedisServer()
  try {
    const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
    try {
      await measure(report, redis, 'standalone', undefined, keys)
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
      await measure(report, client, 'Cluster, 3 masters', CLUSTER_SHARDS, keys)
    } finally {
      client.disconnect()
    }
  } finally {
    await cluster.stop()
  }
}
