// The Redis suite's realistic rows (issue 15): what services send, batches of 1000 keys with one in
// flight (on a 1M filter, one sized for a billion keys and one half full) and single `has` calls
// from 1000 concurrent callers, each with client and server CPU per key, next to the naive Lua
// baseline in the same run; and on standalone the floor row of redis-floor.ts.
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { loadavg } from 'node:os'
import { chunks, cycle, ratio, sizeLabel, userKeys } from './measure.js'
import { BATCH, CALLERS, CHUNK, ERROR_RATE, type RedisBench } from './redis-bench.js'
import { cpuNote, medianCost, serverCpuSeconds, timeCalls, type Cost, type RedisClient } from './redis-cost.js'
import { FLOOR_REQUESTS, measureFloor } from './redis-floor.js'
import { NAIVE_BATCH, NAIVE_IN_FLIGHT, naiveBaseline } from './redis-naive.js'

/** Capacity and keys of the filter whose bits are half set, for the row of new keys into it. */
const HALF_FULL_KEYS = 1_000_000
/** The billion-key filter's capacity (default shards: ~4 MiB each). */
const BIG_CAPACITY = 1_000_000_000
/** Keys per timed call of the naive baseline in the 1000-key rows (its 1000-key calls, 1 or 8 in flight). */
const NAIVE_KEYS = 24_000

/** The share of a filter's bits that are set (BITCOUNT of each shard's bits, its marker left out). */
async function bitsSetShare(redis: RedisClient, filter: RedisBloomFilter): Promise<number> {
  const { bits, shards } = filter.parameters
  let set = 0
  for (const key of filter.keys.slice(1, 1 + shards)) set += await redis.bitcount(key, 0, bits / shards / 8 - 1)
  return set / bits
}

/**
 * `has(id)` from {@link CALLERS} concurrent callers, each awaiting its answer before the next
 * call (as requests in a service), `callsPerCaller` calls each: throughput and the latency of each call.
 */
async function singleCalls(redis: RedisClient, filter: RedisBloomFilter, keys: readonly string[], callsPerCaller: number): Promise<Cost & { p50: number; p99: number }> {
  const latencies: number[] = []
  const server = await serverCpuSeconds(redis)
  const client = process.cpuUsage()
  const start = performance.now()
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      for (let i = 0; i < callsPerCaller; i++) {
        const before = performance.now()
        if (!(await filter.has(keys[(caller * callsPerCaller + i) % keys.length]))) throw new Error('a key added is missing')
        latencies.push(performance.now() - before)
      }
    }),
  )
  const elapsed = (performance.now() - start) / 1000
  const used = process.cpuUsage(client)
  const calls = CALLERS * callsPerCaller
  const serverUs = ((await serverCpuSeconds(redis)) - server) * 1e6
  latencies.sort((a, b) => a - b)
  return {
    opsPerSecond: calls / elapsed,
    clientUs: (used.user + used.system) / calls,
    serverUs: serverUs / calls,
    p50: latencies[Math.floor(calls * 0.5)],
    p99: latencies[Math.floor(calls * 0.99)],
  }
}

/**
 * What services send (issue 15): batches of 1000 keys with one in flight, on a 1M filter and on
 * one sized for a billion keys (default shards), and single `has` calls from 1000 concurrent
 * callers; each with client and server CPU per key, next to the naive Lua baseline in the same run.
 */
export async function measureRealistic(bench: RedisBench): Promise<void> {
  const { rows, redis, topology, shards, keys, rounds, batchCalls, progress } = bench
  const keyCount = keys.length
  const batches = chunks(keys, BATCH)
  const naiveKey = `bench:naive1k:${topology}:${process.pid}`
  await redis.del(naiveKey)
  const naive = await naiveBaseline(redis, naiveKey, keyCount)
  await naive.add(keys)
  const naiveChunks = cycle(chunks(keys, NAIVE_KEYS))
  // On standalone, each filter is also measured through the client's own connection
  // (batchConnection: false), the path batches took before they had connections of their own.
  const filters: Array<{ label: string; filter: RedisBloomFilter; viaClient?: RedisBloomFilter }> = []
  for (const [label, capacity] of [[`${sizeLabel(keyCount)} filter`, keyCount], ['filter sized for 1e9, default shards', BIG_CAPACITY]] as const) {
    const name = `bench:realistic:${capacity}:${topology}:${process.pid}`
    await RedisBloomFilter.destroy(redis, name)
    const filter = await RedisBloomFilter.create(redis, name, { capacity, errorRate: ERROR_RATE, shards: capacity === keyCount ? shards : undefined })
    await filter.addMany(keys)
    const viaClient = topology === 'standalone' ? await RedisBloomFilter.open(redis, name, { batchConnection: false, kind: 'fixed' }) : undefined
    filters.push({ label, filter, viaClient })
  }
  // Issue 25: new keys into a 1M filter with half its bits set (as a filter sized for its keys is
  // once they are all in), in a quick run too: a smaller filter takes the whole-shard path.
  const halfName = `bench:half:${topology}:${process.pid}`
  await RedisBloomFilter.destroy(redis, halfName)
  const halfFull = await RedisBloomFilter.create(redis, halfName, { capacity: HALF_FULL_KEYS, errorRate: ERROR_RATE, shards })
  for (const chunk of chunks(keyCount === HALF_FULL_KEYS ? keys : userKeys(0, HALF_FULL_KEYS), CHUNK)) await halfFull.addMany(chunk)
  const halfShare = await bitsSetShare(redis, halfFull)
  // The floor row's bits: a copy of the first shard as it is now, before the timed calls add to it.
  const floorSource = redis instanceof Redis && halfFull.parameters.shards === 1 ? `${halfName}:floor-source` : undefined
  if (floorSource !== undefined) await redis.call('COPY', halfFull.keys[1], floorSource, 'REPLACE')
  let fresh = 0
  const newBatch = () => userKeys(keyCount + fresh, keyCount + (fresh += BATCH)).map((key) => `new:${key}`)
  const results = new Map<string, Cost[]>()
  const record = (what: string, cost: Cost) => results.set(what, [...(results.get(what) ?? []), cost])
  const loadBefore = loadavg()[0]
  for (let round = 0; round < rounds; round++) {
    progress(`${topology}, batches of 1000: round ${round + 1} of ${rounds}`)
    for (const { label, filter, viaClient } of filters) {
      for (const [which, handle] of [['', filter], [' client', viaClient]] as const) {
        if (handle === undefined) continue
        record(`add present ${label}${which}`, await timeCalls(redis, BATCH, batchCalls, (i) => handle.addMany(batches[(round * batchCalls + i) % batches.length])))
        // New keys each call; made before the clock starts.
        const fresh = Array.from({ length: batchCalls + 10 }, newBatch)
        record(`add new ${label}${which}`, await timeCalls(redis, BATCH, batchCalls, (i) => handle.addMany(fresh[i])))
        record(`has ${label}${which}`, await timeCalls(redis, BATCH, batchCalls, (i) => handle.hasMany(batches[(round * batchCalls + i + 7) % batches.length])))
      }
    }
    const freshForHalf = Array.from({ length: batchCalls + 10 }, newBatch)
    record('add new half full', await timeCalls(redis, BATCH, batchCalls, (i) => halfFull.addMany(freshForHalf[i])))
    for (const inFlight of [1, NAIVE_IN_FLIGHT]) {
      record(`naive add ${inFlight}`, await timeCalls(redis, NAIVE_KEYS, 3, () => naive.add(naiveChunks(), inFlight), 1))
      record(`naive has ${inFlight}`, await timeCalls(redis, NAIVE_KEYS, 3, () => naive.has(naiveChunks(), inFlight), 1))
    }
  }
  const single = await singleCalls(redis, filters[0].filter, keys, bench.callsPerCaller)
  const load = `machine load ${loadBefore.toFixed(1)}→${loadavg()[0].toFixed(1)}`
  const cost = (what: string) => medianCost(results.get(what)!)
  // The ratios compare like with like: bloomkit's one batch in flight with the naive baseline's
  // one call in flight; the ratio to the pipelined baseline (8 in flight) follows it.
  const naiveAdd = cost('naive add 1')
  const naiveHas = cost('naive has 1')
  const pipelinedAdd = cost(`naive add ${NAIVE_IN_FLIGHT}`)
  const pipelinedHas = cost(`naive has ${NAIVE_IN_FLIGHT}`)
  const small = filters[0].label
  const fullShare = await bitsSetShare(redis, filters[0].filter)
  for (const { label, filter, viaClient } of filters) {
    const shape = `k=${filter.parameters.hashes}, ${filter.parameters.shards} shard(s)`
    const versus = (what: string, naiveCost: Cost, pipelined: Cost) => {
      const ours = cost(`${what} ${label}`)
      const toSmall = label === small ? '' : `; ${ratio(ours.opsPerSecond, cost(`${what} ${small}`).opsPerSecond)} the ${small}`
      return `${ratio(ours.opsPerSecond, naiveCost.opsPerSecond)} naive at 1 call in flight, ${ratio(ours.opsPerSecond, pipelined.opsPerSecond)} at ${NAIVE_IN_FLIGHT}${toSmall}; ${cpuNote(ours)}`
    }
    const big = label !== small
    const chart = (group: string, series: string) => ({ chart: 'redis', group: `${group} (${topology})`, series: big ? `${series}, filter sized for 1e9` : series })
    const headline = (what: string) => (!big && topology === 'standalone' ? `Redis: ${what}, ${small}, standalone` : undefined)
    rows.add({ suite: 'redis', task: `addMany, 1 in flight (${label}, ${topology})`, subject: 'bloomkit, keys already present', batch: BATCH, opsPerSecond: cost(`add present ${label}`).opsPerSecond, notes: `${shape}; ${versus('add present', naiveAdd, pipelinedAdd)}` })
    rows.add({ suite: 'redis', task: `addMany, 1 in flight (${label}, ${topology})`, subject: 'bloomkit, new keys', batch: BATCH, opsPerSecond: cost(`add new ${label}`).opsPerSecond, notes: versus('add new', naiveAdd, pipelinedAdd), chart: chart('addMany of new keys', 'bloomkit'), headline: headline('addMany of new keys') })
    rows.add({ suite: 'redis', task: `hasMany, 1 in flight (${label}, ${topology})`, subject: 'bloomkit', batch: BATCH, opsPerSecond: cost(`has ${label}`).opsPerSecond, notes: `${shape}; ${versus('has', naiveHas, pipelinedHas)}`, chart: chart('hasMany', 'bloomkit'), headline: headline('hasMany') })
    if (viaClient === undefined) continue
    const subject = (what: string) => `bloomkit${what}, through the client's connection (batchConnection: false)`
    const toDefault = (what: string) => {
      const theirs = cost(`${what} ${label} client`)
      return `${ratio(theirs.opsPerSecond, cost(`${what} ${label}`).opsPerSecond)} the batch connections; ${cpuNote(theirs)}`
    }
    rows.add({ suite: 'redis', task: `addMany, 1 in flight (${label}, ${topology})`, subject: subject(', keys already present'), batch: BATCH, opsPerSecond: cost(`add present ${label} client`).opsPerSecond, notes: toDefault('add present') })
    rows.add({ suite: 'redis', task: `addMany, 1 in flight (${label}, ${topology})`, subject: subject(', new keys'), batch: BATCH, opsPerSecond: cost(`add new ${label} client`).opsPerSecond, notes: toDefault('add new') })
    rows.add({ suite: 'redis', task: `hasMany, 1 in flight (${label}, ${topology})`, subject: subject(''), batch: BATCH, opsPerSecond: cost(`has ${label} client`).opsPerSecond, notes: toDefault('has') })
  }
  const halfCost = cost('add new half full')
  const percent = (share: number) => `${(share * 100).toFixed(0)} % of its bits set`
  rows.add({
    suite: 'redis',
    task: `addMany of new keys, 1 in flight (${sizeLabel(HALF_FULL_KEYS)} filter, half its bits set, ${topology})`,
    subject: 'bloomkit',
    batch: BATCH,
    opsPerSecond: halfCost.opsPerSecond,
    notes: `${sizeLabel(HALF_FULL_KEYS)} keys in a filter for ${sizeLabel(HALF_FULL_KEYS)}: ${percent(halfShare)} before the timed calls (the ${small} above: ${percent(fullShare)} after them); ${cpuNote(halfCost)}`,
  })
  if (floorSource !== undefined && redis instanceof Redis) {
    const { hashes } = halfFull.parameters
    const floor = await measureFloor(bench, redis, { pristine: floorSource, name: halfName, filter: halfFull })
    await redis.del(floorSource)
    const us = (value: number) => `${value.toFixed(2)} µs/key`
    rows.add({
      suite: 'redis',
      task: `floor: Redis CPU per new key, all ${hashes} bits vs block read + missing bits (${sizeLabel(HALF_FULL_KEYS)} filter, half its bits set, ${topology})`,
      subject: `raw BITFIELD SET u1 / GETRANGE, ${BATCH} keys a request`,
      batch: BATCH,
      opsPerSecond: 0,
      notes:
        `Redis CPU (INFO cpu): BITFIELD of all ${hashes} bits ${us(floor.allBitsUs)}; block GETRANGEs (pipelined, no MULTI) ${us(floor.readUs)} + BITFIELD of the ${(hashes * (1 - floor.setShare)).toFixed(1)} bits/key found unset ${us(floor.missingUs)}; ` +
        `${(floor.setShare * 100).toFixed(0)} % of bits found set; best Redis-CPU ratio full/(read + missing) ${ratio(floor.allBitsUs, floor.readUs + floor.missingUs)}, target 1.3×; ` +
        `bloomkit's addMany of new keys in the same alternation: all ${hashes} bits (blockReads: false) ${us(floor.bloomkitAllBitsUs)}, missing bits (default) ${us(floor.bloomkitUs)}, ${ratio(floor.bloomkitAllBitsUs, floor.bloomkitUs)} less; ` +
        `medians over ${rounds * FLOOR_REQUESTS} requests of each, alternating, on a copy of the shard`,
    })
  }
  await halfFull.destroy()
  const naiveSeries = `naive Lua, ${NAIVE_BATCH} keys/call, 1 in flight`
  for (const [inFlight, add, has] of [[1, naiveAdd, naiveHas], [NAIVE_IN_FLIGHT, pipelinedAdd, pipelinedHas]] as const) {
    const subject = `naive Lua, 1000 keys/call, decimal ARGV, ${inFlight} call${inFlight === 1 ? '' : 's'} in flight`
    const chart = (group: string) => (inFlight === 1 ? { chart: 'redis', group: `${group} (${topology})`, series: naiveSeries } : undefined)
    rows.add({ suite: 'redis', task: `add (${small}, ${topology})`, subject, batch: NAIVE_BATCH, opsPerSecond: add.opsPerSecond, notes: cpuNote(add), chart: chart('addMany of new keys') })
    rows.add({ suite: 'redis', task: `has (${small}, ${topology})`, subject, batch: NAIVE_BATCH, opsPerSecond: has.opsPerSecond, notes: inFlight === 1 ? cpuNote(has) : `${cpuNote(has)}; ${load}`, chart: chart('hasMany') })
  }
  rows.add({
    suite: 'redis',
    task: `has, single calls from ${CALLERS} concurrent callers (${small}, ${topology})`,
    subject: 'bloomkit',
    batch: 1,
    opsPerSecond: single.opsPerSecond,
    notes: `latency p50 ${single.p50.toFixed(2)} ms, p99 ${single.p99.toFixed(2)} ms; ${cpuNote(single)}`,
    chart: { chart: 'redis', group: `has, single calls from ${CALLERS} callers (${topology})`, series: 'bloomkit' },
    headline: topology === 'standalone' ? `Redis: has, single calls from ${CALLERS} concurrent callers` : undefined,
  })
  for (const { filter, viaClient } of filters) {
    await viaClient?.close()
    await filter.destroy()
  }
  await redis.del(naiveKey)
}
