import fc from 'fast-check'
import { expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { startRedisServer } from '../../../test-support/redis-servers.js'
import { bothDeployments, errorOf, fastFail, namesOf, PATHS, uniqueName } from './support/clients.js'

// Faults a filter meets in production, each held to one rule: a call ends in a coded error or
// finds every key it had acknowledged; never a silent "absent".

const { redis, cluster } = bothDeployments()

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

/** The rule: `promise` rejects with a BloomError of one of `codes`, or resolves with every key present. */
async function codedErrorOrAllPresent(promise: Promise<boolean[]>, codes: string[]): Promise<string> {
  const outcome = await promise.then(
    (answers) => (answers.every(Boolean) ? 'all present' : `${answers.filter((a) => !a).length} false negatives`),
    (error: unknown) => (error instanceof BloomError ? error.code : `uncoded ${String(error)}`),
  )
  expect(['all present', ...codes]).toContain(outcome)
  return outcome
}

test.each([
  ['seed', '12345'],
  ['hashes', '3'],
  ['scheme', '1'],
  ['bits', String(2 * 8 * 1024 * 64)],
])('a meta hash whose %s was edited is BLOOM_CORRUPT_STORE on open and on the next call of an open filter', async (field, value) => {
  for (const client of [redis, cluster]) {
    const name = uniqueName(`tampered-${field}`)
    const filter = await RedisBloomFilter.create(client, name, { capacity: 20_000, errorRate: 0.01, shards: 2 })
    const members = keys('m', 20_000)
    await filter.addMany(members)
    await client.hset(namesOf(filter).meta, field, value)
    expect((await errorOf(RedisBloomFilter.open(client, name))).code).toBe('BLOOM_CORRUPT_STORE')
    expect(await codedErrorOrAllPresent(filter.hasMany(members), ['BLOOM_CORRUPT_STORE'])).toBe('BLOOM_CORRUPT_STORE')
    expect((await errorOf(filter.has(members[0]))).code).toBe('BLOOM_CORRUPT_STORE')
    expect((await errorOf(filter.addMany(['x']))).code).toBe('BLOOM_CORRUPT_STORE')
    expect((await errorOf(filter.export())).code).toBe('BLOOM_CORRUPT_STORE')
    await filter.destroy()
  }
})

test('a meta hash edited together with its check field, but disagreeing with its shards, is BLOOM_CORRUPT_STORE on open', async () => {
  const name = uniqueName('disagree')
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 20_000, errorRate: 0.01, shards: 2 })
  await filter.addMany(keys('m', 1000))
  // A tool rewrites the meta of another filter's size (and a valid check) over this one's.
  const other = await RedisBloomFilter.create(redis, uniqueName('donor'), { capacity: 40_000, errorRate: 0.01, shards: 2, seed: filter.parameters.seed })
  const donor = await redis.hgetall(namesOf(other).meta)
  await redis.hset(namesOf(filter).meta, { ...donor, epoch: String(filter.epoch) })
  const { check: _, ...withoutCheck } = donor
  expect(Object.keys(withoutCheck).length).toBeGreaterThan(5)
  // Recompute the check as a careful tool would, so only the shards can tell.
  const { metaCheck, CHECKED_FIELDS } = await import('../src/layout/meta.js')
  const fields: Record<string, string> = { ...donor, epoch: String(filter.epoch) }
  await redis.hset(namesOf(filter).meta, 'check', metaCheck(CHECKED_FIELDS.map((f) => fields[f])))
  const error = await errorOf(RedisBloomFilter.open(redis, name))
  expect(error.code).toBe('BLOOM_CORRUPT_STORE')
  expect(error.message).toMatch(/disagrees with its shards/)
  await Promise.all([filter.destroy(), other.destroy()])
})

test('a filter from before the check field (no check in its meta) still opens', async () => {
  const name = uniqueName('legacy')
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01 })
  await filter.add('a')
  await redis.hdel(namesOf(filter).meta, 'check')
  const again = await RedisBloomFilter.open(redis, name)
  expect(await again.has('a')).toBe(true)
  await filter.destroy()
})

test('a server killed mid-batch and restarted empty: each call is a coded error or finds every acknowledged key', async () => {
  let server = await startRedisServer()
  const client = new Redis({ host: server.host, port: server.port, ...fastFail })
  client.on('error', () => {})
  try {
    const filter = await RedisBloomFilter.create(client, 'killed', { capacity: 200_000, errorRate: 0.01, shards: 4, timeout: 1000 })
    const acknowledged = keys('ack', 5000)
    await filter.addMany(acknowledged)
    const during = filter.addMany(keys('during', 200_000)).then(() => 'resolved', (error: unknown) => (error as BloomError).code)
    await new Promise((resolve) => setTimeout(resolve, 20))
    await server.kill()
    server = await startRedisServer({ port: server.port })
    expect(['resolved', 'BLOOM_STORE_UNAVAILABLE', 'BLOOM_DATA_LOST']).toContain(await during)
    const outcomes = new Set<string>()
    for (let attempt = 0; attempt < 30; attempt++) {
      outcomes.add(await codedErrorOrAllPresent(filter.hasMany(acknowledged), ['BLOOM_STORE_UNAVAILABLE', 'BLOOM_DATA_LOST']))
      outcomes.add(await codedErrorOrAllPresent(filter.has(acknowledged[7]).then((a) => [a]), ['BLOOM_STORE_UNAVAILABLE', 'BLOOM_DATA_LOST']))
      if (outcomes.has('BLOOM_DATA_LOST')) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    // Once reconnected, the empty server is noticed: the data is lost, and said so.
    expect(outcomes.has('BLOOM_DATA_LOST')).toBe(true)
    expect(outcomes.has('all present')).toBe(false)
  } finally {
    client.disconnect()
    await server.stop()
  }
}, 30_000)

test('eviction under memory pressure (allkeys-lru): every call is a coded error or finds every key', async () => {
  const server = await startRedisServer({ args: ['--maxmemory', '8mb', '--maxmemory-policy', 'allkeys-lru'] })
  const client = new Redis({ host: server.host, port: server.port, ...fastFail })
  client.on('error', () => {})
  try {
    const filter = await RedisBloomFilter.create(client, 'evicted', { capacity: 100_000, errorRate: 0.01, shards: 8 })
    const members = keys('m', 20_000)
    await filter.addMany(members)
    // Another application fills the memory; LRU evicts whatever was touched least recently.
    const filler = 'x'.repeat(64 * 1024)
    for (let i = 0; i < 300; i++) await client.set(`other:${i}`, filler).catch(() => undefined)
    const names = namesOf(filter)
    const lost = (await client.exists(names.meta, ...Array.from({ length: 8 }, (_, s) => names.shard(s)))) < 9
    // The filter was touched before all of the filler: LRU evicts some of it.
    expect(lost).toBe(true)
    const outcomes = new Set<string>()
    for (const path of [{}, { scanBytesPerKey: 0 }, { scanBytesPerKey: 0, blockReads: false }]) {
      const reader = await RedisBloomFilter.open(client, 'evicted', path).catch((error: unknown) => error as BloomError)
      if (reader instanceof BloomError) {
        outcomes.add(reader.code)
        continue
      }
      outcomes.add(await codedErrorOrAllPresent(reader.hasMany(members), ['BLOOM_DATA_LOST']))
      outcomes.add(await codedErrorOrAllPresent(Promise.all(members.slice(0, 100).map((key) => reader.has(key))), ['BLOOM_DATA_LOST']))
    }
    // The filler evicted at least one shard or the meta: that must show as an error.
    expect([...outcomes].some((outcome) => outcome !== 'all present')).toBe(true)
  } finally {
    client.disconnect()
    await server.stop()
  }
}, 30_000)

test('a streamed import is refused as soon as it sends more than its header declared, and leaves nothing', async () => {
  const memory = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
  memory.addMany(keys('s', 100))
  const snapshot = memory.export()
  let pulled = 0
  async function* endless() {
    yield snapshot
    // A broken or hostile source keeps sending: it must not be read to its end.
    for (;;) {
      pulled++
      yield new Uint8Array(64 * 1024)
    }
  }
  const name = uniqueName('overlong')
  expect((await errorOf(RedisBloomFilter.import(redis, name, endless()))).code).toBe('BLOOM_CORRUPT_SNAPSHOT')
  expect(pulled).toBeLessThanOrEqual(1)
  expect(await redis.exists(`${name}:meta`)).toBe(0)
})

test('any fault to the keys of a filter, after any number of batches, on every path and topology: a coded error or every acknowledged key (property)', async () => {
  // What an operator, a script or the server itself can do to a filter's keys between two calls.
  const faults = ['delete a shard', 'replace a shard by a short string', 'zero a shard whole (marker gone)', 'delete the meta', 'edit a meta field'] as const
  const codes = ['BLOOM_DATA_LOST', 'BLOOM_CORRUPT_STORE', 'BLOOM_NOT_FOUND', 'BLOOM_INCOMPATIBLE']
  const cases = fc.record({
    cluster: fc.boolean(),
    path: fc.constantFrom(...PATHS.map(([, options]) => options)),
    shards: fc.integer({ min: 1, max: 4 }),
    batches: fc.integer({ min: 1, max: 3 }),
    fault: fc.constantFrom(...faults),
    which: fc.nat(),
    field: fc.constantFrom('seed', 'hashes', 'bits', 'shards', 'scheme', 'epoch', 'check'),
  })
  await fc.assert(
    fc.asyncProperty(cases, async ({ cluster: onCluster, path, shards, batches, fault, which, field }) => {
      const client = onCluster ? cluster : redis
      const name = uniqueName('fault-property')
      const filter = await RedisBloomFilter.create(client, name, { capacity: 4000, errorRate: 0.01, shards, ...path })
      const names = namesOf(filter)
      const acknowledged: string[] = []
      for (let b = 0; b < batches; b++) {
        const batch = keys(`b${b}`, 700)
        await filter.addMany(batch)
        acknowledged.push(...batch)
      }
      const shard = names.shard(which % shards)
      if (fault === 'delete a shard') await client.del(shard)
      else if (fault === 'replace a shard by a short string') await client.set(shard, 'x')
      else if (fault === 'zero a shard whole (marker gone)') await client.set(shard, Buffer.alloc(Number(await client.strlen(shard))))
      else if (fault === 'delete the meta') await client.del(names.meta)
      else await client.hset(names.meta, field, `${(await client.hget(names.meta, field)) ?? ''}1`)
      await codedErrorOrAllPresent(filter.hasMany(acknowledged), codes)
      await codedErrorOrAllPresent(Promise.all(acknowledged.slice(0, 50).map((key) => filter.has(key))), codes)
      await codedErrorOrAllPresent(
        RedisBloomFilter.open(client, name, path).then((reopened) => reopened.hasMany(acknowledged)),
        codes,
      )
      // One key per DEL: on a Cluster the keys live in different slots.
      for (const key of [names.meta, ...Array.from({ length: shards }, (_, s) => names.shard(s))]) await client.del(key)
    }),
    { seed: 20261124, numRuns: 40 },
  )
}, 120_000)
