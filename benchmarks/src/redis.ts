import { createKeyHasher, shardBitsOf, TEST_BITS, testBitSetBit } from '@bloomkit/core/store'
import { BLOCK_BITS, fillPositions } from '@bloomkit/core/spec'
import { sizeFilter } from '@bloomkit/core'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
// The workspace's private test launcher, built by `pnpm run build` (benchmarks/tsconfig.json references it).
import { startRedisCluster, startRedisServer } from '../../test-support/dist/redis-servers.js'
import { Cluster, Redis } from 'ioredis'
import { loadavg } from 'node:os'
import { chunks, cycle, median, medianOpsPerSecond, ratio, sizeLabel, userKeys, xorshift32, type SuiteOptions } from './measure.js'
import type { Report, Row } from './report.js'
import { cpuNote, medianCost, serverCpuSeconds, timeCalls, type Cost, type RedisClient } from './redis-cost.js'
import { measureReplica, measureReplicaBatches } from './redis-replica.js'

/** Says how far the suite got (set by runRedisBenchmarks). */
let progress: (what: string) => void = () => {}

/** Rows gathered before they go to the report, so that the realistic ones lead the table. */
type Rows = { add(row: Row): void }

/** Keys in the filters; rounds; calls per timed run of a 1000-key row; calls per single-call caller. A quick run takes the second set. */
const FULL = { keys: 1_000_000, rounds: 3, batchCalls: 100, callsPerCaller: 30 }
const QUICK = { keys: 200_000, rounds: 1, batchCalls: 30, callsPerCaller: 10 }
let KEYS = FULL.keys
const ERROR_RATE = 0.01 // k = 7
const CHUNK = 100_000
/** The naive baseline's batch: one Lua call per 1000 keys, offsets as decimal ARGV. */
const NAIVE_BATCH = 1000
/**
 * Naive calls kept in flight in the 100k-key rows and the second naive row of the 1000-key rows,
 * so the baseline is pipelined too and not a strawman. The 1000-key rows compare bloomkit (one
 * batch in flight) with the naive baseline at one call in flight: like with like.
 */
const NAIVE_IN_FLIGHT = 8
/** Shards of the Cluster filter: four per master, so every master takes a share. */
const CLUSTER_SHARDS = 12
/** Alternating rounds of bloomkit and baseline measurements. */
let ROUNDS = FULL.rounds


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
  const run = async (script: 'naiveAdd' | 'naiveHas', keys: readonly string[], inFlight: number) => {
    const batches = chunks(keys, NAIVE_BATCH)
    let next = 0
    const worker = async () => {
      while (next < batches.length) await call(script, batches[next++])
    }
    await Promise.all(Array.from({ length: inFlight }, worker))
  }
  return {
    add: (keys: readonly string[], inFlight = NAIVE_IN_FLIGHT) => run('naiveAdd', keys, inFlight),
    has: (keys: readonly string[], inFlight = NAIVE_IN_FLIGHT) => run('naiveHas', keys, inFlight),
  }
}

async function memoryPerKey(redis: RedisClient, filter: RedisBloomFilter): Promise<string> {
  let bytes = 0
  for (const key of filter.keys.slice(1)) bytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'))
  const ideal = -Math.log(ERROR_RATE) / (Math.LN2 * Math.LN2)
  return `Redis MEMORY USAGE ${((bytes * 8) / KEYS).toFixed(2)} bits/key (${(bytes / 2 ** 20).toFixed(2)} MiB), ideal ${ideal.toFixed(2)} bits/key`
}

/** The batch services send: 1000 keys per call, one call in flight. */
const BATCH = 1000
/** Calls per timed run of a 1000-key row. */
let BATCH_CALLS = FULL.batchCalls
/** Capacity and keys of the filter whose bits are half set, for the row of new keys into it. */
const HALF_FULL_KEYS = 1_000_000
/** The billion-key filter's capacity (default shards: ~4 MiB each). */
const BIG_CAPACITY = 1_000_000_000
/** Concurrent single-key callers, and the calls each makes per timed run. */
const CALLERS = 1000
let CALLS_PER_CALLER = FULL.callsPerCaller
/** Keys per timed call of the naive baseline in the 1000-key rows (its 1000-key calls, 1 or 8 in flight). */
const NAIVE_KEYS = 24_000

/** The share of a filter's bits that are set (BITCOUNT of each shard's bits, its marker left out). */
async function bitsSetShare(redis: RedisClient, filter: RedisBloomFilter): Promise<number> {
  const { bits, shards } = filter.parameters
  let set = 0
  for (const key of filter.keys.slice(1, 1 + shards)) set += await redis.bitcount(key, 0, bits / shards / 8 - 1)
  return set / bits
}

/** Requests of {@link BATCH} keys of each kind per round of the floor row (after 2 warm-up requests), and its seed. */
const FLOOR_REQUESTS = 40
const FLOOR_SEED = 0x25_05

/** Redis CPU per key of the floor's three commands (medians over requests), and the share of bits its block reads found set. */
interface Floor {
  readonly allBitsUs: number
  readonly readUs: number
  readonly missingUs: number
  /** bloomkit's own `addMany` of new keys in the same alternation (see {@link measureFloor}), as it is and with all k bits (`blockReads: false`). */
  readonly bloomkitUs: number
  readonly bloomkitAllBitsUs: number
  readonly setShare: number
}

/**
 * Issue 25 item 5's floor, in raw commands on a copy of a half-full filter's shard (made afresh
 * each round, so each starts from the same bits and the filter itself is untouched): Redis
 * CPU per new key for (a) one BITFIELD of `hashes` `SET u1` a key, as a full add sends, (b) a
 * pipelined GETRANGE of each key's block (no MULTI), (c) one BITFIELD of only the bits (b) found
 * unset. Blocks, and bits within them, come from a fixed seed: random, as a new key's are. The
 * three alternate request by request with `addMany` of 1000 new keys into `filter`, as it is and
 * opened with `blockReads: false` (all k bits by BITFIELD, as before partial adds), each between two
 * `INFO cpu`s, so that load from other processes and the server's state hit them alike (figures
 * taken minutes apart, as the timed rows', can differ by 2×). Whatever a partial add does around
 * (b) and (c), Redis spends at least that. `filter` has one shard, whose key `pristine` copies: it
 * is set back to that copy each round (the timed calls before have added to it; it is destroyed after).
 */
async function measureFloor(redis: Redis, pristine: string, name: string, filter: RedisBloomFilter): Promise<Floor> {
  const { hashes } = filter.parameters
  const allBitsFilter = await RedisBloomFilter.open(redis, name, { blockReads: false, kind: 'fixed' })
  const copy = `${pristine}:copy`
  const next = xorshift32(FLOOR_SEED)
  const blocks = shardBitsOf(filter.parameters) / BLOCK_BITS
  let fresh = 0
  // One request's keys: each key's bit offsets in the shard, all in one random block.
  const positions = () => {
    const keys: number[][] = []
    for (let i = 0; i < BATCH; i++) {
      const start = (next() % blocks) * BLOCK_BITS
      keys.push(Array.from({ length: hashes }, () => start + (next() % BLOCK_BITS)))
    }
    return keys
  }
  // A BITFIELD setting `offsets`, its arguments made before the clock starts.
  const setBits = (offsets: number[]) => {
    const args = [copy, ...offsets.flatMap((offset) => ['SET', 'u1', offset, 1])]
    return () => redis.call('BITFIELD', args)
  }
  const readBlocks = async (keys: number[][]) => {
    const pipeline = redis.pipeline()
    for (const [first] of keys) {
      const byte = (first - (first % BLOCK_BITS)) / 8
      pipeline.getrangeBuffer(copy, byte, byte + BLOCK_BITS / 8 - 1)
    }
    return (await pipeline.exec())!.map(([error, block]) => {
      if (error) throw error
      return block as Buffer
    })
  }
  const serverUs = async (body: () => Promise<unknown>) => (await timeCalls(redis, BATCH, 1, body, 0)).serverUs
  const allBits: number[] = []
  const read: number[] = []
  const missing: number[] = []
  const bloomkit: number[] = []
  const bloomkitAllBits: number[] = []
  let set = 0
  let probed = 0
  for (let round = 0; round < ROUNDS; round++) {
    progress(`standalone, floor of partial adds: round ${round + 1} of ${ROUNDS}`)
    for (const key of [copy, filter.keys[1]]) await redis.call('COPY', pristine, key, 'REPLACE')
    let last: number[][] = []
    for (let request = -2; request < FLOOR_REQUESTS; request++) {
      const keys = (last = positions())
      const blocksRead: Buffer[] = []
      const readUs = await serverUs(async () => blocksRead.push(...(await readBlocks(keys))))
      const unset = keys.flatMap((offsets, key) => offsets.filter((offset) => testBitSetBit(blocksRead[key], 0, offset % BLOCK_BITS, TEST_BITS) === 0))
      const missingUs = await serverUs(setBits(unset))
      const allBitsUs = await serverUs(setBits(positions().flat()))
      const newKeys = userKeys(fresh, (fresh += BATCH)).map((key) => `floor:${key}`)
      const bloomkitUs = await serverUs(() => filter.addMany(newKeys))
      const moreKeys = userKeys(fresh, (fresh += BATCH)).map((key) => `floor:${key}`)
      const bloomkitAllBitsUs = await serverUs(() => allBitsFilter.addMany(moreKeys))
      if (request < 0) continue
      bloomkit.push(bloomkitUs)
      bloomkitAllBits.push(bloomkitAllBitsUs)
      read.push(readUs)
      missing.push(missingUs)
      allBits.push(allBitsUs)
      set += BATCH * hashes - unset.length
      probed += BATCH * hashes
    }
    // The bits found unset were all an add had to set: the last request's bits are all set now.
    const check = (await redis.call('BITFIELD_RO', [copy, ...last.flat().flatMap((offset) => ['GET', 'u1', offset])])) as number[]
    if (check.includes(0)) throw new Error('redis floor: a bit its block read found set is unset (the read and BITFIELD disagree on bit order)')
  }
  await allBitsFilter.close()
  await redis.del(copy)
  return { allBitsUs: median(allBits), readUs: median(read), missingUs: median(missing), bloomkitUs: median(bloomkit), bloomkitAllBitsUs: median(bloomkitAllBits), setShare: set / probed }
}

/**
 * `has(id)` from {@link CALLERS} concurrent callers, each awaiting its answer before the next
 * call (as requests in a service): throughput and the latency of each call.
 */
async function singleCalls(redis: RedisClient, filter: RedisBloomFilter, keys: string[]): Promise<Cost & { p50: number; p99: number }> {
  const latencies: number[] = []
  const server = await serverCpuSeconds(redis)
  const client = process.cpuUsage()
  const start = performance.now()
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      for (let i = 0; i < CALLS_PER_CALLER; i++) {
        const before = performance.now()
        if (!(await filter.has(keys[(caller * CALLS_PER_CALLER + i) % keys.length]))) throw new Error('a key added is missing')
        latencies.push(performance.now() - before)
      }
    }),
  )
  const elapsed = (performance.now() - start) / 1000
  const used = process.cpuUsage(client)
  const calls = CALLERS * CALLS_PER_CALLER
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
async function measureRealistic(rows: Rows, redis: RedisClient, topology: string, shards: number | undefined, keys: string[]): Promise<void> {
  const batches = chunks(keys, BATCH)
  const naiveKey = `bench:naive1k:${topology}:${process.pid}`
  await redis.del(naiveKey)
  const naive = await naiveBaseline(redis, naiveKey)
  await naive.add(keys)
  const naiveChunks = cycle(chunks(keys, NAIVE_KEYS))
  // On standalone, each filter is also measured through the client's own connection
  // (batchConnection: false), the path batches took before they had connections of their own.
  const filters: Array<{ label: string; filter: RedisBloomFilter; viaClient?: RedisBloomFilter }> = []
  for (const [label, capacity] of [[`${sizeLabel(KEYS)} filter`, KEYS], ['filter sized for 1e9, default shards', BIG_CAPACITY]] as const) {
    const name = `bench:realistic:${capacity}:${topology}:${process.pid}`
    await RedisBloomFilter.destroy(redis, name)
    const filter = await RedisBloomFilter.create(redis, name, { capacity, errorRate: ERROR_RATE, shards: capacity === KEYS ? shards : undefined })
    await filter.addMany(keys)
    const viaClient = topology === 'standalone' ? await RedisBloomFilter.open(redis, name, { batchConnection: false, kind: 'fixed' }) : undefined
    filters.push({ label, filter, viaClient })
  }
  // Issue 25: new keys into a 1M filter with half its bits set (as a filter sized for its keys is
  // once they are all in), in a quick run too: a smaller filter takes the whole-shard path.
  const halfName = `bench:half:${topology}:${process.pid}`
  await RedisBloomFilter.destroy(redis, halfName)
  const halfFull = await RedisBloomFilter.create(redis, halfName, { capacity: HALF_FULL_KEYS, errorRate: ERROR_RATE, shards })
  for (const chunk of chunks(KEYS === HALF_FULL_KEYS ? keys : userKeys(0, HALF_FULL_KEYS), CHUNK)) await halfFull.addMany(chunk)
  const halfShare = await bitsSetShare(redis, halfFull)
  // The floor row's bits: a copy of the first shard as it is now, before the timed calls add to it.
  const floorSource = redis instanceof Redis && halfFull.parameters.shards === 1 ? `${halfName}:floor-source` : undefined
  if (floorSource !== undefined) await redis.call('COPY', halfFull.keys[1], floorSource, 'REPLACE')
  let fresh = 0
  const newBatch = () => userKeys(KEYS + fresh, KEYS + (fresh += BATCH)).map((key) => `new:${key}`)
  const results = new Map<string, Cost[]>()
  const record = (what: string, cost: Cost) => results.set(what, [...(results.get(what) ?? []), cost])
  const loadBefore = loadavg()[0]
  for (let round = 0; round < ROUNDS; round++) {
    progress(`${topology}, batches of 1000: round ${round + 1} of ${ROUNDS}`)
    for (const { label, filter, viaClient } of filters) {
      for (const [which, handle] of [['', filter], [' client', viaClient]] as const) {
        if (handle === undefined) continue
        record(`add present ${label}${which}`, await timeCalls(redis, BATCH, BATCH_CALLS, (i) => handle.addMany(batches[(round * BATCH_CALLS + i) % batches.length])))
        // New keys each call; made before the clock starts.
        const fresh = Array.from({ length: BATCH_CALLS + 10 }, newBatch)
        record(`add new ${label}${which}`, await timeCalls(redis, BATCH, BATCH_CALLS, (i) => handle.addMany(fresh[i])))
        record(`has ${label}${which}`, await timeCalls(redis, BATCH, BATCH_CALLS, (i) => handle.hasMany(batches[(round * BATCH_CALLS + i + 7) % batches.length])))
      }
    }
    const freshForHalf = Array.from({ length: BATCH_CALLS + 10 }, newBatch)
    record('add new half full', await timeCalls(redis, BATCH, BATCH_CALLS, (i) => halfFull.addMany(freshForHalf[i])))
    for (const inFlight of [1, NAIVE_IN_FLIGHT]) {
      record(`naive add ${inFlight}`, await timeCalls(redis, NAIVE_KEYS, 3, () => naive.add(naiveChunks(), inFlight), 1))
      record(`naive has ${inFlight}`, await timeCalls(redis, NAIVE_KEYS, 3, () => naive.has(naiveChunks(), inFlight), 1))
    }
  }
  const single = await singleCalls(redis, filters[0].filter, keys)
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
    const floor = await measureFloor(redis, floorSource, halfName, halfFull)
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
        `medians over ${ROUNDS * FLOOR_REQUESTS} requests of each, alternating, on a copy of the shard`,
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

async function measure(report: Rows, redis: RedisClient, topology: string, shards: number | undefined, keys: string[]): Promise<void> {
  progress(`${topology}, batches of 100k`)
  const name = `bench:${topology}:${process.pid}`
  await RedisBloomFilter.destroy(redis, name)
  const filter = await RedisBloomFilter.create(redis, name, { capacity: KEYS, errorRate: ERROR_RATE, shards })
  // The same filter through a store that always sends BITFIELDs (as a batch spread thinly over
  // large shards does), so both mechanisms are measured in the same run.
  const perBit = await RedisBloomFilter.open(redis, name, { scanBytesPerKey: 0, blockReads: false, kind: 'fixed' })
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
  const task = (what: string) => `${what} (${sizeLabel(KEYS)} filter, ${topology})`
  const perBitSubject = 'bloomkit, BITFIELD only (scanBytesPerKey: 0, blockReads: false)'
  const naiveSubject = 'naive Lua, 1000 keys/call, decimal ARGV'
  report.add({ suite: 'redis', task: task('addMany'), subject: 'bloomkit', batch: CHUNK, opsPerSecond: add, notes: `${shape}; first fill ${(fillRate / 1e3).toFixed(0)} k/s; ${ratio(add, naiveAdd)} naive; ${memory}` })
  report.add({ suite: 'redis', task: task('addMany'), subject: perBitSubject, batch: CHUNK, opsPerSecond: perBitAdd, notes: `${ratio(perBitAdd, naiveAdd)} naive` })
  report.add({ suite: 'redis', task: task('addMany'), subject: naiveSubject, batch: CHUNK, opsPerSecond: naiveAdd, notes: `${NAIVE_IN_FLIGHT} calls in flight, 1 key` })
  report.add({ suite: 'redis', task: task('hasMany'), subject: 'bloomkit', batch: CHUNK, opsPerSecond: has, notes: `${shape}; ${ratio(has, naiveHas)} naive; ${load}` })
  report.add({ suite: 'redis', task: task('hasMany'), subject: perBitSubject, batch: CHUNK, opsPerSecond: perBitHas, notes: `${ratio(perBitHas, naiveHas)} naive` })
  report.add({ suite: 'redis', task: task('hasMany'), subject: naiveSubject, batch: CHUNK, opsPerSecond: naiveHas, notes: `${NAIVE_IN_FLIGHT} calls in flight, 1 key` })
}

/**
 * The Redis backend on loopback: `addMany`/`hasMany` of 1M keys (k = 7) against a throwaway
 * standalone server and a 3-master Cluster it starts itself, next to the naive Lua baseline
 * measured in the same run, plus Redis's memory per key. Bounded: about a minute.
 */
export async function runRedisBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  const scale = quick ? QUICK : FULL
  ;({ keys: KEYS, rounds: ROUNDS, batchCalls: BATCH_CALLS, callsPerCaller: CALLS_PER_CALLER } = scale)
  let step = 0
  // Steps: 5 a round and 4 more in the rows of redis.ts, 4 a round and 4 more in the replica's.
  progress = (what) => report.progress(step++, 9 * ROUNDS + 8, what)
  report.describeChart({
    id: 'redis',
    title: 'Redis: keys per second',
    subtitle: 'batches of 1000 keys with one in flight, and single calls from 1000 callers; bloomkit vs a naive Lua script, standalone and a 3-master Cluster',
  })
  const keys = userKeys(0, KEYS)
  const realistic: Row[] = []
  const chunked: Row[] = []
  const into = (rows: Row[]): Rows => ({ add: (row) => rows.push(row) })
  const replicaScale = { progress, quick, keys, rounds: ROUNDS, batchCalls: BATCH_CALLS, callsPerCaller: CALLS_PER_CALLER }
  const server = await startRedisServer()
  try {
    const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
    try {
      await measureRealistic(into(realistic), redis, 'standalone', undefined, keys)
      await measureReplica({ ...replicaScale, rows: into(realistic), redis, topology: 'standalone' }, { port: server.port })
      await measure(into(chunked), redis, 'standalone', undefined, keys)
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
      await measureRealistic(into(realistic), client, 'Cluster, 3 masters', CLUSTER_SHARDS, keys)
      await measureReplicaBatches({ ...replicaScale, rows: into(realistic), redis: client, topology: 'Cluster, 3 masters', shards: CLUSTER_SHARDS })
      await measure(into(chunked), client, 'Cluster, 3 masters', CLUSTER_SHARDS, keys)
    } finally {
      client.disconnect()
    }
  } finally {
    await cluster.stop()
  }
  for (const row of [...realistic, ...chunked]) report.add(row)
}
