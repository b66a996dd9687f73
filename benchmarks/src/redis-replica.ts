// The Redis suite's replica rows (issue 35's targets): a filter with a feed checked through a replica
// in this process (`open(…, { replica })`) against bloomkit's own server path on the same filter, in
// the same run, with alternating rounds; plus what a feed costs adds, how long a replica takes to
// load and how much memory it holds, and how far it lags behind writers in other processes.
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { chunks, median, ratio, sizeLabel, userKeys } from './measure.js'
import { BATCH, CALLERS, CHUNK, ERROR_RATE, type RedisBench } from './redis-bench.js'
import { cpuNote, medianCost, serverCpuSeconds, timeCalls, type Cost, type RedisClient } from './redis-cost.js'
import { LAG_BATCH, LAG_WRITERS, measureLag } from './redis-replica-lag.js'

/** The large filter: sized for 100M keys (~114 MiB, 30 shards), the issue's target; 10M in a quick run. */
const LARGE_CAPACITY = { full: 100_000_000, quick: 10_000_000 }
/** The filter whose load is timed: sized for 10M keys (~11.4 MiB, 3 shards), the issue's. */
const LOAD_CAPACITY = 10_000_000
const LOADS = { full: 5, quick: 2 }
/** Awaited single calls per round per case; strict absent and server calls take a round trip each. */
const SINGLE = { local: 200_000, roundTrip: 2_000, quick: 10 }
/** Bounded mode's window in the single-call rows (ms). */
const BOUNDED_MS = 1000
const LAG_MS = { full: 3000, quick: 1000 }

/** Single awaited calls: calls per second over the loop, latency percentiles (µs), client and server CPU per call (µs). */
interface AwaitedCalls {
  readonly callsPerSecond: number
  readonly p50Us: number
  readonly p99Us: number
  readonly clientUs: number
  readonly serverUs: number
}

/**
 * `calls` calls of `body`, each awaited before the next: once untimed (calls per second over the
 * loop, with no clock read between calls) and once timing each call (latency percentiles).
 */
async function awaitedCalls(redis: RedisClient, calls: number, body: (i: number) => Promise<unknown>): Promise<AwaitedCalls> {
  const server = await serverCpuSeconds(redis)
  const client = process.cpuUsage()
  const start = performance.now()
  for (let i = 0; i < calls; i++) await body(i)
  const elapsed = performance.now() - start
  const used = process.cpuUsage(client)
  const serverUs = (((await serverCpuSeconds(redis)) - server) * 1e6) / calls
  const latencies = new Float64Array(calls)
  for (let i = 0; i < calls; i++) {
    const before = performance.now()
    await body(i)
    latencies[i] = performance.now() - before
  }
  latencies.sort()
  const p50Us = latencies[Math.floor(calls / 2)] * 1000
  return { callsPerSecond: calls / (elapsed / 1000), p50Us, p99Us: latencies[Math.floor(calls * 0.99)] * 1000, clientUs: (used.user + used.system) / calls, serverUs }
}

const missing = () => new Error('redis replica: has answered false for a key that was added')
/** Checks a present key's answer (an absent key's may be true: a false positive). */
const isPresent = (found: boolean) => {
  if (!found) throw missing()
}

/** {@link CALLERS} concurrent callers of `has`, each awaiting its answer before its next call: calls per second. */
async function concurrentCalls(bench: RedisBench, filter: RedisBloomFilter, keys: readonly string[], { present, callsPerCaller }: { present: boolean; callsPerCaller: number }): Promise<Cost> {
  const calls = CALLERS * callsPerCaller
  return timeCalls(bench.redis, calls, 1, async () => {
    const start = performance.now()
    await Promise.all(
      Array.from({ length: CALLERS }, async (_, caller) => {
        for (let i = 0; i < callsPerCaller; i++) {
          // An absent key may read present (a false positive); a present key never reads absent.
          if (!(await filter.has(keys[(caller * callsPerCaller + i) % keys.length])) && present) throw missing()
        }
      }),
    )
    return performance.now() - start
  }, 1)
}

const absentKeys = (from: number, count: number) => userKeys(from, from + count).map((key) => `absent:${key}`)
const us = (value: number) => `${value.toFixed(1)} µs`

/** A filter with a feed named for this run, filled with `keys` in 100k chunks. */
async function filledFilter(bench: RedisBench, label: string, capacity: number, shards?: number): Promise<{ name: string; filter: RedisBloomFilter }> {
  const name = `bench:replica:${label}:${bench.topology}:${process.pid}`
  await RedisBloomFilter.destroy(bench.redis, name)
  const filter = await RedisBloomFilter.create(bench.redis, name, { capacity, errorRate: ERROR_RATE, feed: true, shards })
  for (const chunk of chunks(bench.keys, CHUNK)) await filter.addMany(chunk)
  return { name, filter }
}

/** Opens `name` with a replica: the handle and its load time (ms). */
async function openReplica(bench: RedisBench, name: string, maxStaleness?: number) {
  const start = performance.now()
  const filter = await RedisBloomFilter.open(bench.redis, name, { kind: 'fixed', replica: maxStaleness === undefined ? true : { maxStaleness } })
  return { filter, loadMs: performance.now() - start }
}

/**
 * `hasMany` of 1000 keys, one in flight, present and absent keys, through a strict replica and
 * through the server path of the same filter, the four alternating each round.
 */
async function batchRows(bench: RedisBench, label: string, capacity: number, shards?: number): Promise<void> {
  const { name, filter: server } = await filledFilter(bench, label, capacity, shards)
  const opened = await openReplica(bench, name)
  const replica = opened.filter
  const present = chunks(bench.keys, BATCH)
  const absent = chunks(absentKeys(0, BATCH * (bench.batchCalls + 10)), BATCH)
  const costs = new Map<string, Cost[]>()
  const record = (what: string, cost: Cost) => costs.set(what, [...(costs.get(what) ?? []), cost])
  for (let round = 0; round < bench.rounds; round++) {
    bench.progress(`${bench.topology}, replica of the ${label} filter, hasMany: round ${round + 1} of ${bench.rounds}`)
    for (const [who, handle] of [['replica', replica], ['server', server]] as const) {
      record(`${who} present`, await timeCalls(bench.redis, BATCH, bench.batchCalls, (i) => handle.hasMany(present[(round * bench.batchCalls + i) % present.length])))
      record(`${who} absent`, await timeCalls(bench.redis, BATCH, bench.batchCalls, (i) => handle.hasMany(absent[i % absent.length])))
    }
  }
  const status = replica.replica!
  const task = `hasMany, 1 in flight, through a replica (${label} filter, ${bench.topology})`
  const shape = `${server.parameters.shards} shard(s), ${(status.bytes / 2 ** 20).toFixed(1)} MiB of bits held, loaded in ${opened.loadMs.toFixed(0)} ms`
  for (const keys of ['present', 'absent'] as const) {
    const ours = medianCost(costs.get(`replica ${keys}`)!)
    const theirs = medianCost(costs.get(`server ${keys}`)!)
    const how = keys === 'present' ? 'answered from its bits, no round trip' : 'one barrier (a read of the touched shards\' feeds) per batch'
    bench.rows.add({
      suite: 'redis',
      task,
      subject: `bloomkit replica, strict, ${keys} keys`,
      batch: BATCH,
      opsPerSecond: ours.opsPerSecond,
      headline: keys === 'present' && label === '1M' && bench.topology === 'standalone' ? 'Redis: hasMany through a replica (strict), 1M filter, present keys' : undefined,
      notes: `${ratio(ours.opsPerSecond, theirs.opsPerSecond)} the server path on the same filter and keys (${(theirs.opsPerSecond / 1e3).toFixed(0)} k/s; ${cpuNote(theirs)}), target ≥ 10×; ${how}; ${cpuNote(ours)}; ${keys === 'present' ? shape : `${bench.rounds} alternating rounds`}`,
    })
  }
  await replica.close()
  await server.destroy()
}

/** Single awaited calls, 1000 concurrent callers, and bounded mode, on the suite's filter. */
async function singleRows(bench: RedisBench, name: string, server: RedisBloomFilter): Promise<void> {
  const { filter: strict } = await openReplica(bench, name)
  const { filter: bounded } = await openReplica(bench, name, BOUNDED_MS)
  const scale = bench.quick ? SINGLE.quick : 1
  const local = SINGLE.local / scale
  const roundTrip = SINGLE.roundTrip / scale
  const keys = bench.keys
  const absent = absentKeys(0, local)
  const found = new Map<string, AwaitedCalls[]>()
  const record = (what: string, result: AwaitedCalls) => found.set(what, [...(found.get(what) ?? []), result])
  const concurrent = new Map<string, Cost[]>()
  const recordConcurrent = (what: string, cost: Cost) => concurrent.set(what, [...(concurrent.get(what) ?? []), cost])
  for (let round = 0; round < bench.rounds; round++) {
    bench.progress(`${bench.topology}, replica, single calls: round ${round + 1} of ${bench.rounds}`)
    record('ping', await awaitedCalls(bench.redis, roundTrip, () => bench.redis.ping()))
    record('replica present', await awaitedCalls(bench.redis, local, (i) => strict.has(keys[i % keys.length]).then(isPresent)))
    record('replica absent', await awaitedCalls(bench.redis, roundTrip, (i) => strict.has(absent[i])))
    record('bounded absent', await awaitedCalls(bench.redis, local, (i) => bounded.has(absent[i])))
    record('server present', await awaitedCalls(bench.redis, roundTrip, (i) => server.has(keys[i % keys.length]).then(isPresent)))
    record('server absent', await awaitedCalls(bench.redis, roundTrip, (i) => server.has(absent[i])))
    recordConcurrent('replica present', await concurrentCalls(bench, strict, keys, { present: true, callsPerCaller: local / CALLERS }))
    recordConcurrent('replica absent', await concurrentCalls(bench, strict, absent, { present: false, callsPerCaller: bench.callsPerCaller }))
    recordConcurrent('server present', await concurrentCalls(bench, server, keys, { present: true, callsPerCaller: bench.callsPerCaller }))
  }
  const result = (what: string) => {
    const all = found.get(what)!
    const of = (field: keyof AwaitedCalls) => median(all.map((r) => r[field]))
    return { callsPerSecond: of('callsPerSecond'), p50Us: of('p50Us'), p99Us: of('p99Us'), clientUs: of('clientUs'), serverUs: of('serverUs') }
  }
  const ping = result('ping')
  const serverPresent = result('server present')
  const serverAbsent = result('server absent')
  const task = `has, one awaited call at a time, through a replica (${sizeLabel(keys.length)} filter, ${bench.topology})`
  const latency = (r: AwaitedCalls) => `p50 ${us(r.p50Us)}, p99 ${us(r.p99Us)}`
  const against = `one round trip (awaited PING) p50 ${us(ping.p50Us)}; the server path's has ${latency(serverPresent)} present, ${latency(serverAbsent)} absent`
  const rows: Array<[string, AwaitedCalls, string]> = [
    ['bloomkit replica, strict, present keys', result('replica present'), 'target p50 ≤ 5 µs'],
    ['bloomkit replica, strict, absent keys', result('replica absent'), `target p50 ≤ one round trip; ${against}`],
    [`bloomkit replica, bounded (maxStaleness ${BOUNDED_MS} ms), absent keys`, result('bounded absent'), 'target ≥ 5 M calls/s (answered from its bits while its last catch-up began within the bound)'],
  ]
  for (const [subject, r, target] of rows) {
    bench.rows.add({ suite: 'redis', task, subject, batch: 1, opsPerSecond: r.callsPerSecond, notes: `${latency(r)}; ${ratio(r.callsPerSecond, serverPresent.callsPerSecond)} the server path's present has; ${target}; client ${r.clientUs.toFixed(2)} µs/call, server ${r.serverUs.toFixed(2)} µs/call` })
  }
  const today = medianCost(concurrent.get('server present')!)
  for (const keysKind of ['present', 'absent'] as const) {
    const ours = medianCost(concurrent.get(`replica ${keysKind}`)!)
    bench.rows.add({
      suite: 'redis',
      task: `has, single calls from ${CALLERS} concurrent callers, through a replica (${sizeLabel(keys.length)} filter, ${bench.topology})`,
      subject: `bloomkit replica, strict, ${keysKind} keys`,
      batch: 1,
      opsPerSecond: ours.opsPerSecond,
      notes: `${ratio(ours.opsPerSecond, today.opsPerSecond)} the server path's coalesced calls on present keys (${(today.opsPerSecond / 1e3).toFixed(0)} k calls/s; ${cpuNote(today)}), target ≥ 10×; ${cpuNote(ours)}`,
    })
  }
  await strict.close()
  await bounded.close()
}

/**
 * Adds of 1000 new keys: into a filter with a feed against one without (both empty at the start,
 * alternating), and through a replica against the server path on the suite's half-full filter.
 */
async function addRows(bench: RedisBench, name: string, halfFull: RedisBloomFilter): Promise<void> {
  const capacity = bench.keys.length
  const made: RedisBloomFilter[] = []
  for (const feed of [true, false]) {
    const own = `bench:replica:adds:${feed}:${process.pid}`
    await RedisBloomFilter.destroy(bench.redis, own)
    made.push(await RedisBloomFilter.create(bench.redis, own, { capacity, errorRate: ERROR_RATE, feed }))
  }
  const [withFeed, withoutFeed] = made
  const { filter: replica } = await openReplica(bench, name)
  let fresh = 0
  const newBatches = () => Array.from({ length: bench.batchCalls + 10 }, () => userKeys(fresh, (fresh += BATCH)).map((key) => `new:${key}`))
  const costs = new Map<string, Cost[]>()
  const record = (what: string, cost: Cost) => costs.set(what, [...(costs.get(what) ?? []), cost])
  for (let round = 0; round < bench.rounds; round++) {
    bench.progress(`${bench.topology}, replica, adds: round ${round + 1} of ${bench.rounds}`)
    for (const [what, handle] of [['feed', withFeed], ['no feed', withoutFeed], ['replica', replica], ['server', halfFull]] as const) {
      const batches = newBatches()
      record(what, await timeCalls(bench.redis, BATCH, bench.batchCalls, (i) => handle.addMany(batches[i])))
    }
  }
  const cost = (what: string) => medianCost(costs.get(what)!)
  const [feed, noFeed, viaReplica, viaServer] = [cost('feed'), cost('no feed'), cost('replica'), cost('server')]
  bench.rows.add({
    suite: 'redis',
    task: `addMany of new keys, 1 in flight, filter with a feed (${sizeLabel(capacity)} filter, ${bench.topology})`,
    subject: 'bloomkit, feed: true',
    batch: BATCH,
    opsPerSecond: feed.opsPerSecond,
    notes: `Redis CPU per key ${ratio(feed.serverUs, noFeed.serverUs)} a filter without a feed (${cpuNote(noFeed)}, ${(noFeed.opsPerSecond / 1e3).toFixed(0)} k/s), target ≤ 1.15×; ${cpuNote(feed)}; both empty at the start, ${bench.rounds} alternating rounds`,
  })
  bench.rows.add({
    suite: 'redis',
    task: `addMany of new keys, 1 in flight, through a replica (${sizeLabel(capacity)} filter, half its bits set, ${bench.topology})`,
    subject: 'bloomkit replica',
    batch: BATCH,
    opsPerSecond: viaReplica.opsPerSecond,
    notes: `${ratio(viaReplica.opsPerSecond, viaServer.opsPerSecond)} the server path on the same filter (${(viaServer.opsPerSecond / 1e3).toFixed(0)} k/s; ${cpuNote(viaServer)}), target ≥ 1.3×; ${cpuNote(viaReplica)}`,
  })
  await replica.close()
  for (const filter of made) await filter.destroy()
}

/** Load time and memory of a replica of a filter sized for 10M keys. */
async function loadRows(bench: RedisBench): Promise<void> {
  bench.progress(`${bench.topology}, replica, load of a ${sizeLabel(LOAD_CAPACITY)} filter`)
  const { name, filter } = await filledFilter(bench, 'load', LOAD_CAPACITY)
  const loads: number[] = []
  const opens: number[] = []
  const clientMs: number[] = []
  const serverMs: number[] = []
  let memory = ''
  for (let i = 0; i < (bench.quick ? LOADS.quick : LOADS.full); i++) {
    const start = performance.now()
    await (await RedisBloomFilter.open(bench.redis, name, { kind: 'fixed' })).close()
    opens.push(performance.now() - start)
    const server = await serverCpuSeconds(bench.redis)
    const client = process.cpuUsage()
    const opened = await openReplica(bench, name)
    loads.push(opened.loadMs)
    const used = process.cpuUsage(client)
    clientMs.push((used.user + used.system) / 1000)
    serverMs.push(((await serverCpuSeconds(bench.redis)) - server) * 1000)
    if (i === 0) {
      const { bytes, shards } = opened.filter.replica!
      const bits = filter.parameters.bits / 8
      memory = `replica memory: ${bytes} bytes of bits held for a filter of ${bits} bytes of bits (${shards} shards; per shard also its feed position and two numbers)`
    }
    await opened.filter.close()
  }
  const bytes = filter.parameters.bits / 8
  const loadMs = median(loads)
  bench.rows.add({
    suite: 'redis',
    task: `open with a replica: load (filter sized for ${sizeLabel(LOAD_CAPACITY)} keys, ${(bytes / 2 ** 20).toFixed(1)} MiB of bits, holding ${sizeLabel(bench.keys.length)}, ${bench.topology})`,
    subject: 'bloomkit replica',
    batch: 1,
    opsPerSecond: 1000 / loadMs,
    notes: `median load ${loadMs.toFixed(0)} ms over ${loads.length} opens (${((bytes / 2 ** 20) / (loadMs / 1000)).toFixed(0)} MiB/s; open without a replica ${median(opens).toFixed(1)} ms), target ≤ 200 ms; ops/s = opens/s; CPU per load: client ${median(clientMs).toFixed(0)} ms, server ${median(serverMs).toFixed(0)} ms; ${memory}`,
  })
  await filter.destroy()
}

/**
 * The replica rows, on the suite's standalone server: batches, single and concurrent calls, adds,
 * load and memory, and lag behind {@link LAG_WRITERS} writer processes (which connect to `port`).
 */
export async function measureReplica(bench: RedisBench, { port }: { port: number }): Promise<void> {
  const { name, filter } = await filledFilter(bench, 'main', bench.keys.length)
  await batchRows(bench, `${sizeLabel(bench.keys.length)}`, bench.keys.length)
  const large = bench.quick ? LARGE_CAPACITY.quick : LARGE_CAPACITY.full
  await batchRows(bench, `sized for ${sizeLabel(large)}, holding ${sizeLabel(bench.keys.length)}`, large)
  await singleRows(bench, name, filter)
  await addRows(bench, name, filter)
  await loadRows(bench)
  bench.progress(`${bench.topology}, replica lag behind ${LAG_WRITERS} writer processes`)
  const lag = await measureLag(bench.redis, port, name, bench.quick ? LAG_MS.quick : LAG_MS.full)
  bench.rows.add({
    suite: 'redis',
    task: `replica lag while ${LAG_WRITERS} processes add (${sizeLabel(bench.keys.length)} filter, ${bench.topology})`,
    subject: 'bloomkit replica, follower (XREAD BLOCK), bounded reads',
    batch: LAG_BATCH,
    opsPerSecond: lag.keysPerSecond,
    notes:
      `ops/s = keys the writers added per second (target load 100 k/s); from an add acknowledged in a writer to the replica showing the key: p50 ${lag.p50Ms.toFixed(2)} ms, p99 ${lag.p99Ms.toFixed(2)} ms, max ${lag.maxMs.toFixed(1)} ms over ${lag.samples} batches (looked for every 0.5 ms), target p99 ≤ 10 ms; ` +
      `per key added: server ${lag.serverUs.toFixed(2)} µs, writers ${lag.writersUs.toFixed(2)} µs, the replica's process ${lag.replicaUs.toFixed(2)} µs`,
  })
  await filter.destroy()
}

/**
 * The replica's `hasMany` rows on a Cluster, on the suite's filter spread over the masters: a
 * catch-up there is one script per touched shard (and the follower polls), so it differs from
 * standalone.
 */
export async function measureReplicaBatches(bench: RedisBench): Promise<void> {
  await batchRows(bench, `${sizeLabel(bench.keys.length)}`, bench.keys.length, bench.shards)
}
