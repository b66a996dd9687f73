// The Redis suite's 100k-key rows: addMany and hasMany in chunks of 100k keys, bloomkit as it is and
// through BITFIELD only (as a batch spread thinly over large shards is sent), next to the naive Lua
// baseline pipelined, in alternating rounds; and Redis's memory per key.
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { loadavg } from 'node:os'
import { chunks, cycle, median, medianOpsPerSecond, ratio, sizeLabel } from './measure.js'
import { CHUNK, ERROR_RATE, type RedisBench } from './redis-bench.js'
import type { RedisClient } from './redis-cost.js'
import { NAIVE_IN_FLIGHT, naiveBaseline } from './redis-naive.js'

/** Redis's memory per key of `filter`'s shards, holding `keyCount` keys, next to the ideal for its error rate. */
async function memoryPerKey(redis: RedisClient, filter: RedisBloomFilter, keyCount: number): Promise<string> {
  let bytes = 0
  for (const key of filter.keys.slice(1)) bytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'))
  const ideal = -Math.log(ERROR_RATE) / (Math.LN2 * Math.LN2)
  return `Redis MEMORY USAGE ${((bytes * 8) / keyCount).toFixed(2)} bits/key (${(bytes / 2 ** 20).toFixed(2)} MiB), ideal ${ideal.toFixed(2)} bits/key`
}

/**
 * `addMany`/`hasMany` in chunks of 100k keys: bloomkit as it is and through BITFIELD only, next to
 * the naive baseline with {@link NAIVE_IN_FLIGHT} calls in flight, in alternating rounds; and Redis's memory per key.
 */
export async function measureChunks(bench: RedisBench): Promise<void> {
  const { rows, redis, topology, shards, keys, rounds, progress } = bench
  const keyCount = keys.length
  progress(`${topology}, batches of 100k`)
  const name = `bench:${topology}:${process.pid}`
  await RedisBloomFilter.destroy(redis, name)
  const filter = await RedisBloomFilter.create(redis, name, { capacity: keyCount, errorRate: ERROR_RATE, shards })
  // The same filter through a store that always sends BITFIELDs (as a batch spread thinly over
  // large shards does), so both mechanisms are measured in the same run.
  const perBit = await RedisBloomFilter.open(redis, name, { scanBytesPerKey: 0, blockReads: false, kind: 'fixed' })
  const keyChunks = chunks(keys, CHUNK)
  const start = performance.now()
  await filter.addMany(keys)
  const fillRate = keyCount / ((performance.now() - start) / 1000)
  const addChunk = cycle(keyChunks)
  const hasChunk = cycle(keyChunks)
  const naiveKey = `bench:naive:${topology}:${process.pid}`
  await redis.del(naiveKey)
  const naive = await naiveBaseline(redis, naiveKey, keyCount)
  await naive.add(keys)
  // Rounds alternate between bloomkit and the baseline, so that load from other processes on a
  // shared machine hits both alike; each figure is the median of the rounds' medians.
  const loadBefore = loadavg()[0]
  const medians = { add: [] as number[], has: [] as number[], perBitAdd: [] as number[], perBitHas: [] as number[], naiveAdd: [] as number[], naiveHas: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    medians.add.push(await medianOpsPerSecond(`redis ${topology} addMany`, CHUNK, () => filter.addMany(addChunk())))
    medians.perBitAdd.push(await medianOpsPerSecond(`redis ${topology} addMany, BITFIELD only`, CHUNK, () => perBit.addMany(addChunk())))
    medians.naiveAdd.push(await medianOpsPerSecond(`naive ${topology} add`, CHUNK, () => naive.add(addChunk()), { iterations: 2, time: 0 }))
    medians.has.push(await medianOpsPerSecond(`redis ${topology} hasMany`, CHUNK, () => filter.hasMany(hasChunk())))
    medians.perBitHas.push(await medianOpsPerSecond(`redis ${topology} hasMany, BITFIELD only`, CHUNK, () => perBit.hasMany(hasChunk())))
    medians.naiveHas.push(await medianOpsPerSecond(`naive ${topology} has`, CHUNK, () => naive.has(hasChunk()), { iterations: 2, time: 0 }))
  }
  const load = `machine load ${loadBefore.toFixed(1)}→${loadavg()[0].toFixed(1)}`
  const add = median(medians.add)
  const has = median(medians.has)
  const perBitAdd = median(medians.perBitAdd)
  const perBitHas = median(medians.perBitHas)
  const naiveAdd = median(medians.naiveAdd)
  const naiveHas = median(medians.naiveHas)
  const found = (await filter.hasMany(keys)).every(Boolean) && (await perBit.hasMany(keys)).every(Boolean)
  if (!found) throw new Error(`redis ${topology}: a key added is missing`)
  const memory = await memoryPerKey(redis, filter, keyCount)
  await perBit.close()
  await filter.destroy()
  await redis.del(naiveKey)

  const { hashes } = filter.parameters
  const shape = `k=${hashes}, ${filter.parameters.shards} shard(s)`
  const task = (what: string) => `${what} (${sizeLabel(keyCount)} filter, ${topology})`
  const perBitSubject = 'bloomkit, BITFIELD only (scanBytesPerKey: 0, blockReads: false)'
  const naiveSubject = 'naive Lua, 1000 keys/call, decimal ARGV'
  rows.add({ suite: 'redis', task: task('addMany'), subject: 'bloomkit', batch: CHUNK, opsPerSecond: add, notes: `${shape}; first fill ${(fillRate / 1e3).toFixed(0)} k/s; ${ratio(add, naiveAdd)} naive; ${memory}` })
  rows.add({ suite: 'redis', task: task('addMany'), subject: perBitSubject, batch: CHUNK, opsPerSecond: perBitAdd, notes: `${ratio(perBitAdd, naiveAdd)} naive` })
  rows.add({ suite: 'redis', task: task('addMany'), subject: naiveSubject, batch: CHUNK, opsPerSecond: naiveAdd, notes: `${NAIVE_IN_FLIGHT} calls in flight, 1 key` })
  rows.add({ suite: 'redis', task: task('hasMany'), subject: 'bloomkit', batch: CHUNK, opsPerSecond: has, notes: `${shape}; ${ratio(has, naiveHas)} naive; ${load}` })
  rows.add({ suite: 'redis', task: task('hasMany'), subject: perBitSubject, batch: CHUNK, opsPerSecond: perBitHas, notes: `${ratio(perBitHas, naiveHas)} naive` })
  rows.add({ suite: 'redis', task: task('hasMany'), subject: naiveSubject, batch: CHUNK, opsPerSecond: naiveHas, notes: `${NAIVE_IN_FLIGHT} calls in flight, 1 key` })
}
