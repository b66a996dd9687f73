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

/**
 * Counting filters against plain ones of the same parameters, in paired rounds (ratios taken per
 * round, medians reported). Memory: single-call add, remove and has of a filter holding `n` keys;
 * each round adds fresh keys to both and removes them from the counting filter again, so it stays
 * at `n`. Redis (standalone, loopback): addMany and removeMany of 1000 keys.
 */
export async function runCountingBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  const rounds = quick ? 5 : 15
  const n = quick ? 200_000 : 1_000_000
  const plain = await MemoryBloomFilter.create({ capacity: n, errorRate: ERROR_RATE, seed: 1 })
  const counting = await CountingMemoryFilter.create({ capacity: n, errorRate: ERROR_RATE, seed: 1 })
  const base = userKeys(0, n)
  for (const key of base) plain.add(key)
  for (const key of base) counting.add(key)
  const probes = randomUserKeys(0, 2 * n, 200_000, 11)
  const samples = { plainAdd: [] as number[], add: [] as number[], remove: [] as number[], plainHas: [] as number[], has: [] as number[] }
  for (let round = 0; round < rounds; round++) {
    const fresh = userKeys(n + round * 100_000, n + (round + 1) * 100_000)
    samples.plainAdd.push(rate(fresh.length, () => { for (const key of fresh) plain.add(key) }))
    samples.add.push(rate(fresh.length, () => { for (const key of fresh) counting.add(key) }))
    samples.remove.push(rate(fresh.length, () => { for (const key of fresh) counting.remove(key) }))
    samples.plainHas.push(rate(probes.length, () => { for (const key of probes) plain.has(key) }))
    samples.has.push(rate(probes.length, () => { for (const key of probes) counting.has(key) }))
  }
  const paired = (ours: number[], theirs: number[]) => median(ours.map((value, i) => value / theirs[i])).toFixed(2)
  const size = `${n / 1000}k keys at 1 %`
  const memoryNote = `${(counting.byteLength / 2 ** 20).toFixed(2)} MiB of counters (${counting.byteLength / plain.byteLength}× the plain filter's bits); median of ${rounds} paired rounds`
  report.add({ suite: 'counting', task: `memory add (${size}, single calls)`, subject: 'bloomkit plain', batch: 1, opsPerSecond: median(samples.plainAdd), notes: '' })
  report.add({ suite: 'counting', task: `memory add (${size}, single calls)`, subject: 'bloomkit counting', batch: 1, opsPerSecond: median(samples.add), notes: `${paired(samples.add, samples.plainAdd)}× plain add; ${memoryNote}` })
  report.add({ suite: 'counting', task: `memory remove (${size}, single calls)`, subject: 'bloomkit counting', batch: 1, opsPerSecond: median(samples.remove), notes: `${paired(samples.remove, samples.plainAdd)}× plain add` })
  report.add({ suite: 'counting', task: `memory has (${size}, half present, single calls)`, subject: 'bloomkit plain', batch: 1, opsPerSecond: median(samples.plainHas), notes: '' })
  report.add({ suite: 'counting', task: `memory has (${size}, half present, single calls)`, subject: 'bloomkit counting', batch: 1, opsPerSecond: median(samples.has), notes: `${paired(samples.has, samples.plainHas)}× plain has` })
  plain.close()
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
      report.add({ suite: 'counting', task: 'Redis addMany(1000)', subject: 'bloomkit counting', batch: 1000, opsPerSecond: median(redisSamples.add), notes: `${paired(redisSamples.add, redisSamples.plainAdd)}× plain addMany (one Lua script per shard key)` })
      report.add({
        suite: 'counting',
        task: 'Redis removeMany(1000)',
        subject: 'bloomkit counting',
        batch: 1000,
        opsPerSecond: median(redisSamples.remove),
        notes: `${paired(redisSamples.remove, redisSamples.add)}× counting addMany, ${paired(redisSamples.remove, redisSamples.plainAdd)}× plain addMany`,
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
