import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { RedisBloomFilter, RedisCountingFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { startRedisServer } from '../../test-support/dist/redis-servers.js'
import { chunks, median, randomUserKeys, userKeys, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'

const ERROR_RATE = 0.01

/** Keys per second of `body` over `count` keys. */
function rate(count: number, body: () => void): number {
  const start = performance.now()
  body()
  return count / ((performance.now() - start) / 1000)
}

async function rateAsync(count: number, body: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await body()
  return count / ((performance.now() - start) / 1000)
}

// Single-call loops over `keys`, as a service sends them: an index loop, no closure per key, one
// loop per filter class so that each call site sees one class (as in an app using one of them).

function addPlain(filter: MemoryBloomFilter, keys: readonly string[]): void {
  for (let i = 0; i < keys.length; i++) filter.add(keys[i])
}

function addCounting(filter: CountingMemoryFilter, keys: readonly string[]): void {
  for (let i = 0; i < keys.length; i++) filter.add(keys[i])
}

function removeCounting(filter: CountingMemoryFilter, keys: readonly string[]): void {
  for (let i = 0; i < keys.length; i++) filter.remove(keys[i])
}

/** Counts the positives, so that no check can be dropped as dead code. */
function hasPlain(filter: MemoryBloomFilter, keys: readonly string[]): number {
  let positives = 0
  for (let i = 0; i < keys.length; i++) if (filter.has(keys[i])) positives++
  return positives
}

function hasCounting(filter: CountingMemoryFilter, keys: readonly string[]): number {
  let positives = 0
  for (let i = 0; i < keys.length; i++) if (filter.has(keys[i])) positives++
  return positives
}

/** Milliseconds `body` takes. */
function elapsed(body: () => unknown): number {
  const start = performance.now()
  body()
  return performance.now() - start
}

/** The median of per-round ratios, with their middle half: `0.74× (middle half of rounds 0.68–0.80)`. */
function pairedRatio(ours: number[], theirs: number[]): string {
  const ratios = ours.map((value, i) => value / theirs[i]).sort((a, b) => a - b)
  const at = (q: number) => ratios[Math.round(q * (ratios.length - 1))].toFixed(2)
  return `${median(ratios).toFixed(2)}× (middle half of rounds ${at(0.25)}–${at(0.75)})`
}

/**
 * Counting filters against plain ones of the same parameters, in paired rounds (ratios taken per
 * round, medians reported). Memory: single-call add, remove and has of a filter holding `n` keys;
 * each round adds fresh keys to the counting filter and removes them again, so it stays at `n`,
 * and adds the same fresh keys to a second plain filter, so the plain filter whose `has` is timed
 * also stays at `n` (probes half in it, half never added anywhere). Redis (standalone, loopback):
 * addMany and removeMany of 1000 keys.
 */
export async function runCountingBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  const rounds = quick ? 5 : 15
  const n = quick ? 200_000 : 1_000_000
  const plain = await MemoryBloomFilter.create({ capacity: n, errorRate: ERROR_RATE, seed: 1 })
  const plainAdds = await MemoryBloomFilter.create({ capacity: n, errorRate: ERROR_RATE, seed: 1 })
  const counting = await CountingMemoryFilter.create({ capacity: n, errorRate: ERROR_RATE, seed: 1 })
  const base = userKeys(0, n)
  addPlain(plain, base)
  addPlain(plainAdds, base)
  addCounting(counting, base)
  // Probes: half from the n keys, half from [n, 2n), which no filter ever holds (fresh keys start at 2n).
  const probes = chunks(randomUserKeys(0, 2 * n, 200_000, 11), 100_000)
  const samples = { plainAdd: [] as number[], add: [] as number[], remove: [] as number[], plainHas: [] as number[], has: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    report.progress(round, rounds, `memory: paired round ${round + 1}`)
    const fresh = userKeys(2 * n + round * 100_000, 2 * n + (round + 1) * 100_000)
    const first = round % 2 === 0
    if (first) samples.plainAdd.push(rate(fresh.length, () => addPlain(plainAdds, fresh)))
    samples.add.push(rate(fresh.length, () => addCounting(counting, fresh)))
    samples.remove.push(rate(fresh.length, () => removeCounting(counting, fresh)))
    if (!first) samples.plainAdd.push(rate(fresh.length, () => addPlain(plainAdds, fresh)))
    // Checks in chunks, plain and counting taking turns (which goes first alternates), each pair
    // a few ms apart; the round's figure is its chunks' total.
    let plainTime = 0
    let countingTime = 0
    for (let c = 0; c < probes.length; c++) {
      const chunk = probes[c]
      if ((round + c) % 2 === 0) {
        plainTime += elapsed(() => hasPlain(plain, chunk))
        countingTime += elapsed(() => hasCounting(counting, chunk))
      } else {
        countingTime += elapsed(() => hasCounting(counting, chunk))
        plainTime += elapsed(() => hasPlain(plain, chunk))
      }
    }
    const checks = probes.reduce((sum, chunk) => sum + chunk.length, 0)
    samples.plainHas.push(checks / (plainTime / 1000))
    samples.has.push(checks / (countingTime / 1000))
  }
  const paired = (ours: number[], theirs: number[]) => median(ours.map((value, i) => value / theirs[i])).toFixed(2)
  const size = `${n / 1000}k keys at 1 %`
  const memoryNote = `${(counting.byteLength / 2 ** 20).toFixed(2)} MiB of counters (${counting.byteLength / plain.byteLength}× the plain filter's bits); median of ${rounds} paired rounds`
  report.add({ suite: 'counting', task: `memory add (${size}, single calls)`, subject: 'bloomkit plain', batch: 1, opsPerSecond: median(samples.plainAdd), notes: '' })
  report.add({ suite: 'counting', task: `memory add (${size}, single calls)`, subject: 'bloomkit counting', batch: 1, opsPerSecond: median(samples.add), notes: `${pairedRatio(samples.add, samples.plainAdd)} plain add; ${memoryNote}` })
  report.add({ suite: 'counting', task: `memory remove (${size}, single calls)`, subject: 'bloomkit counting', batch: 1, opsPerSecond: median(samples.remove), notes: `${pairedRatio(samples.remove, samples.plainAdd)} plain add` })
  report.add({ suite: 'counting', task: `memory has (${size}, half present, random order, single calls)`, subject: 'bloomkit plain', batch: 1, opsPerSecond: median(samples.plainHas), notes: '' })
  report.add({ suite: 'counting', task: `memory has (${size}, half present, random order, single calls)`, subject: 'bloomkit counting', batch: 1, opsPerSecond: median(samples.has), notes: `${pairedRatio(samples.has, samples.plainHas)} plain has` })
  plain.close()
  plainAdds.close()
  counting.close()

  const server = await startRedisServer()
  try {
    const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
    try {
      const capacity = quick ? 100_000 : 1_000_000
      const plainRedis = await RedisBloomFilter.create(redis, 'bench-plain', { capacity, errorRate: ERROR_RATE, seed: 1 })
      const countingRedis = await RedisCountingFilter.create(redis, 'bench-counting', { capacity, errorRate: ERROR_RATE, seed: 1 })
      const batches = chunks(userKeys(0, (quick ? 10 : 40) * 1000), 1000)
      const redisSamples = { plainAdd: [] as number[], add: [] as number[], remove: [] as number[] }
      for (const batch of batches) {
        redisSamples.plainAdd.push(await rateAsync(batch.length, () => plainRedis.addMany(batch)))
        redisSamples.add.push(await rateAsync(batch.length, () => countingRedis.addMany(batch)))
        redisSamples.remove.push(await rateAsync(batch.length, () => countingRedis.removeMany(batch)))
      }
      const note = `${capacity / 1000}k-key filter at 1 %, loopback, median of ${batches.length} paired batches`
      report.add({ suite: 'counting', task: 'Redis addMany(1000)', subject: 'bloomkit plain', batch: 1000, opsPerSecond: median(redisSamples.plainAdd), notes: note })
      report.add({ suite: 'counting', task: 'Redis addMany(1000)', subject: 'bloomkit counting', batch: 1000, opsPerSecond: median(redisSamples.add), notes: `${pairedRatio(redisSamples.add, redisSamples.plainAdd)} plain addMany (one Lua script per shard key and up to 4,096 keys)` })
      report.add({
        suite: 'counting',
        task: 'Redis removeMany(1000)',
        subject: 'bloomkit counting',
        batch: 1000,
        opsPerSecond: median(redisSamples.remove),
        notes: `${paired(redisSamples.remove, redisSamples.add)}× counting addMany, ${pairedRatio(redisSamples.remove, redisSamples.plainAdd)} plain addMany`,
      })
      await plainRedis.destroy()
      await countingRedis.destroy()
    } finally {
      redis.disconnect()
    }
  } finally {
    await server.stop()
  }
}
