import { describe, expect, test, vi } from 'vitest'
import { BloomError, estimateErrorRate, sizeFilter } from '@bloomkit/core'
import { DEFAULT_SHARD_BITS, RedisBloomFilter } from '@bloomkit/redis-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { Redis } from 'ioredis'
import { inject } from 'vitest'
import { bothDeployments, namesOf, PATHS, uniqueName } from './support/clients.js'

const { redis, cluster } = bothDeployments()

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(BloomError)
    return (error as BloomError).code
  }
  return 'resolved'
}

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

describe.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('RedisBloomFilter on %s', (_, client) => {
  test('the issue example: addMany, has, and open with parameters from Redis', async () => {
    const name = uniqueName('example')
    const ids = await RedisBloomFilter.create(client, name, { capacity: 10_000, errorRate: 0.001 })
    expect(await ids.addMany(['u1', 'u2'])).toEqual([true, true])
    expect(await ids.has('u3')).toBe(false)
    const same = await RedisBloomFilter.open(client, name, { kind: 'fixed' })
    expect(same.parameters).toEqual(ids.parameters)
    expect(await same.hasMany(['u1', 'u2', 'u3'])).toEqual([true, true, false])
    expect(await same.add('u1')).toBe(false)
    await ids.destroy()
  })

  test('no false negatives over 20 000 keys in 8 shards, false positives near the target', async () => {
    const filter = await RedisBloomFilter.create(client, uniqueName('fp'), { capacity: 20_000, errorRate: 0.01, shards: 8 })
    const members = keys('m', 20_000)
    const added = await filter.addMany(members)
    expect(added.filter(Boolean).length).toBeGreaterThan(19_700)
    expect((await filter.hasMany(members)).every(Boolean)).toBe(true)
    const probes = await filter.hasMany(keys('p', 50_000))
    const positives = probes.filter(Boolean).length
    // Multiplicative Chernoff bounds (ε = 1e-9) around μ = q·N, q from the actual bits, hashes, shards.
    const { bits, hashes, shards } = filter.parameters
    const mu = estimateErrorRate({ bits, hashes, shards, items: 20_000 }) * probes.length
    const L = Math.log(1e9)
    const upper = (L + Math.sqrt(L * L + 8 * mu * L)) / (2 * mu)
    const lower = Math.sqrt((2 * L) / mu)
    expect(positives).toBeGreaterThan(mu * (1 - lower))
    expect(positives).toBeLessThan(mu * (1 + upper))
    const estimate = await filter.estimateCount()
    expect(Math.abs(estimate - 20_000)).toBeLessThan(400)
    await filter.destroy()
  })

  test('single calls in one tick are coalesced into one command per shard and results stay in order', async () => {
    const filter = await RedisBloomFilter.create(client, uniqueName('coalesce'), { capacity: 1000, errorRate: 0.01, shards: 1 })
    await filter.addMany(['a', 'b', 'c'])
    const spy = vi.spyOn(client, 'sendCommand')
    try {
      const answers = await Promise.all(['a', 'x', 'b', 'y', 'c', 'z'].map((key) => filter.has(key)))
      expect(answers).toEqual([true, false, true, false, true, false])
      // One command reads the shard: a BITFIELD_RO, or (the default for a shard this small) a GETRANGE of it all.
      const reads = spy.mock.calls.filter(([command]) => /^(bitfield|getrange)/.test((command as { name: string }).name))
      expect(reads.length).toBe(1)
    } finally {
      spy.mockRestore()
    }
    await filter.destroy()
  })

  test('racing creates end with one filter; different parameters fail with BLOOM_INCOMPATIBLE', async () => {
    const name = uniqueName('race')
    const options = { capacity: 50_000, errorRate: 0.01, shards: 6 }
    const filters = await Promise.all(Array.from({ length: 6 }, () => RedisBloomFilter.create(client, name, options)))
    expect(new Set(filters.map((f) => f.epoch)).size).toBe(1)
    await filters[0].add('seen')
    expect(await filters[5].has('seen')).toBe(true)
    expect(await codeOf(RedisBloomFilter.create(client, name, { ...options, errorRate: 0.02 }))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(RedisBloomFilter.create(client, name, { ...options, shards: 7 }))).toBe('BLOOM_INCOMPATIBLE')
    // The message says what to do, and does not blame a seed nobody gave (issue 37 item 2).
    const unseeded = await RedisBloomFilter.create(client, name, { ...options, errorRate: 0.02 }).catch((error: Error) => error.message)
    expect(unseeded).toMatch(/exists with other parameters: .*; open it \(open reads its parameters from Redis\), or use another name$/)
    expect(unseeded).not.toContain('seed')
    const other = MemoryBloomFilter.fromParametersSync({ bits: 4096, hashes: 3, shards: 1, seed: 1 })
    const imported = await RedisBloomFilter.import(client, name, other.export()).catch((error: Error) => error.message)
    expect(imported).toMatch(/exists with other parameters: .*; import with \{ replaceParameters: true \} to replace it, or use another name$/)
    await filters[0].destroy()
    expect(await codeOf(filters[1].has('seen'))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(RedisBloomFilter.open(client, name))).toBe('BLOOM_NOT_FOUND')
  })
})

test('shards spread over every master of the Cluster; a shard and its next generation share a slot', async () => {
  const filter = await RedisBloomFilter.create(cluster, uniqueName('spread'), { capacity: 1000, errorRate: 0.01, shards: 3 })
  const layout = namesOf(filter)
  const owners = new Set<string>()
  for (let shard = 0; shard < 3; shard++) {
    const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', layout.shard(shard)))
    expect(Number(await cluster.call('CLUSTER', 'KEYSLOT', layout.nextShard(shard)))).toBe(slot)
    const node = cluster.nodes('master').find((n) => {
      const ranges = (cluster as unknown as { slots: string[][] }).slots[slot]
      return ranges?.includes(`${n.options.host}:${n.options.port}`)
    })
    owners.add(`${node?.options.host}:${node?.options.port}`)
  }
  expect(owners.size).toBe(3)
  await filter.destroy()
})

test('default shards keep each shard at most 4 MiB; explicit shards are honoured', async () => {
  const big = sizeFilter({ capacity: 1_000_000_000, errorRate: 0.001, layout: 'classic', shards: Math.ceil(14_377_587_776 / DEFAULT_SHARD_BITS) })
  expect(big.bits / big.shards).toBeLessThanOrEqual(DEFAULT_SHARD_BITS * 1.01)
  const filter = await RedisBloomFilter.create(redis, uniqueName('shards'), { capacity: 5_000_000, errorRate: 0.01 })
  expect(filter.parameters.shards).toBe(2)
  expect(filter.parameters.bits / filter.parameters.shards).toBeLessThanOrEqual(DEFAULT_SHARD_BITS)
  await filter.destroy()
})

test('no command allocates more than 4 MiB: a large shard grows in 4 MiB steps, a default one is sized exactly', async () => {
  const spy = vi.spyOn(redis, 'sendCommand')
  const setranges = () =>
    spy.mock.calls
      .map(([command]) => command as unknown as { name: string; args: unknown[] })
      .filter((c) => c.name === 'setrange')
      .map((c) => Number(c.args[1]))
  const MiB = 2 ** 20
  const large = await RedisBloomFilter.fromParameters(redis, uniqueName('alloc'), { bits: 9 * 8 * MiB + 64, hashes: 7, shards: 1, seed: 0 })
  expect(setranges()).toEqual([4 * MiB - 1, 8 * MiB - 1, 9 * MiB + 8 + 4 - 1, 9 * MiB + 8])
  expect(Number(await redis.strlen(namesOf(large).shard(0)))).toBe(9 * MiB + 8 + 4)
  await large.destroy()
  spy.mockClear()
  // A default shard: at most 4 MiB with its marker, one exact allocation (jemalloc's 4 MiB class).
  const filter = await RedisBloomFilter.create(redis, uniqueName('alloc'), { capacity: 3_370_000, errorRate: 0.01 })
  const shardBytes = filter.parameters.bits / filter.parameters.shards / 8
  expect(filter.parameters.shards).toBe(1)
  expect(shardBytes).toBeGreaterThan(4 * MiB - 64 * 1024)
  expect(setranges()).toEqual([shardBytes + 3, shardBytes])
  const usage = Number(await redis.call('MEMORY', 'USAGE', namesOf(filter).shard(0), 'SAMPLES', '0'))
  expect(usage).toBeLessThanOrEqual(4 * MiB + 256)
  spy.mockRestore()
  await filter.destroy()
})

test('ttl: the whole filter expires; setTtl changes or removes it', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('ttl'), { capacity: 1000, errorRate: 0.01, shards: 2, ttl: 100 })
  const layout = namesOf(filter)
  for (const key of [layout.meta, layout.shard(0), layout.shard(1)]) {
    const ttl = await redis.ttl(key)
    expect(ttl).toBeGreaterThan(95)
    expect(ttl).toBeLessThanOrEqual(100)
  }
  expect(await filter.ttl()).toBeGreaterThan(95)
  await filter.setTtl(null)
  expect(await filter.ttl()).toBeNull()
  expect(await redis.ttl(layout.shard(1))).toBe(-1)
  await filter.setTtl(1)
  await new Promise((resolve) => setTimeout(resolve, 1200))
  expect(await codeOf(filter.has('x'))).toBe('BLOOM_DATA_LOST')
  expect(await codeOf(RedisBloomFilter.open(redis, filter.name))).toBe('BLOOM_NOT_FOUND')
})

test('bad input fails with BLOOM_INVALID_PARAMETER naming the parameter, and writes nothing', async () => {
  const name = uniqueName('bad')
  const cases: Array<[Promise<unknown>, RegExp]> = [
    [RedisBloomFilter.create(redis, '', { capacity: 10, errorRate: 0.1 }), /name/],
    [RedisBloomFilter.create(redis, 'a{b}', { capacity: 10, errorRate: 0.1 }), /name/],
    [RedisBloomFilter.create(redis, name, { capacity: 0, errorRate: 0.1 }), /capacity/],
    [RedisBloomFilter.create(redis, name, { capacity: 10, errorRate: 1 }), /errorRate/],
    [RedisBloomFilter.create(redis, name, { capacity: 10, errorRate: 0.1, shards: 0 }), /shards/],
    [RedisBloomFilter.create(redis, name, { capacity: 10, errorRate: 0.1, ttl: 0 }), /ttl/],
    [RedisBloomFilter.create(redis, name, { capacity: 10, errorRate: 0.1, timeout: -1 }), /timeout/],
    [RedisBloomFilter.create({} as Redis, name, { capacity: 10, errorRate: 0.1 }), /redis/],
    [RedisBloomFilter.fromParameters(redis, name, { bits: 2 ** 32, hashes: 3, shards: 1, seed: 0 }), /shards/],
  ]
  for (const [promise, pattern] of cases) {
    const error = await promise.then(() => undefined, (e: unknown) => e)
    expect(error).toBeInstanceOf(BloomError)
    expect((error as BloomError).code).toBe('BLOOM_INVALID_PARAMETER')
    expect((error as BloomError).message).toMatch(pattern)
  }
  expect(await redis.exists(`${name}:meta`)).toBe(0)
})

test('a closed filter rejects with BLOOM_CLOSED and leaves the user’s client open', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('closed'), { capacity: 100, errorRate: 0.01 })
  await filter.close()
  expect(await codeOf(filter.has('x'))).toBe('BLOOM_CLOSED')
  expect(await codeOf(filter.addMany(['x']))).toBe('BLOOM_CLOSED')
  expect(await redis.ping()).toBe('PONG')
})

test('a key of another type under the filter’s names gives BLOOM_CORRUPT_STORE', async () => {
  const name = uniqueName('wrongtype')
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 100, errorRate: 0.01 })
  await redis.del(namesOf(filter).shard(0))
  await redis.hset(namesOf(filter).shard(0), 'x', '1')
  expect(await codeOf(filter.has('x'))).toBe('BLOOM_CORRUPT_STORE')
  expect(await codeOf(filter.add('x'))).toBe('BLOOM_CORRUPT_STORE')
  const other = uniqueName('wrongtype-meta')
  await redis.set(`${other}:meta`, 'not a hash')
  expect(await codeOf(RedisBloomFilter.open(redis, other))).toBe('BLOOM_CORRUPT_STORE')
  await redis.del(`${other}:meta`)
  await redis.hset(`${other}:meta`, 'hello', 'world')
  expect(await codeOf(RedisBloomFilter.open(redis, other))).toBe('BLOOM_CORRUPT_STORE')
  await redis.hset(`${other}:meta`, 'format', '99')
  expect(await codeOf(RedisBloomFilter.open(redis, other))).toBe('BLOOM_UNSUPPORTED_VERSION')
})

test.each(PATHS)('keyPrefix of the user’s client is honoured by every command (%s)', async (_, options) => {
  const { host, port } = inject('redisStandalone')
  const prefixed = new Redis({ host, port, keyPrefix: 'tenant7:', maxRetriesPerRequest: 1 })
  try {
    const name = uniqueName('prefix')
    const filter = await RedisBloomFilter.create(prefixed, name, { capacity: 1000, errorRate: 0.01, shards: 2, ...options })
    expect(await filter.addMany(['a', 'b'])).toEqual([true, true])
    expect(await filter.hasMany(['a', 'b', 'c'])).toEqual([true, true, false])
    expect(await redis.exists(`tenant7:${name}:meta`, `tenant7:${namesOf(filter).shard(0)}`)).toBe(2)
    expect(await redis.exists(`${name}:meta`)).toBe(0)
    await filter.destroy()
  } finally {
    await prefixed.quit()
  }
})

test.each(PATHS)('a client with stringNumbers (integer replies as strings) gets the same answers (%s)', async (_, options) => {
  const { host, port } = inject('redisStandalone')
  const strings = new Redis({ host, port, stringNumbers: true, maxRetriesPerRequest: 1 })
  try {
    const filter = await RedisBloomFilter.create(strings, uniqueName('strings'), { capacity: 1000, errorRate: 0.01, shards: 2, ...options })
    expect(await filter.addMany(['a', 'b', 'a'])).toEqual([true, true, false])
    expect(await filter.hasMany(['a', 'b', 'c'])).toEqual([true, true, false])
    expect(await filter.add('b')).toBe(false)
    await filter.destroy()
  } finally {
    await strings.quit()
  }
})

test('clear empties every shard, keeps the filter usable and takes the lock', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('clear'), { capacity: 1000, errorRate: 0.01, shards: 3, ttl: 500 })
  await filter.addMany(keys('c', 500))
  await filter.clear()
  expect((await filter.hasMany(keys('c', 500))).some(Boolean)).toBe(false)
  expect(await filter.estimateCount()).toBe(0)
  expect(await redis.ttl(namesOf(filter).shard(2))).toBeGreaterThan(490)
  expect((await filter.info()).state).toBe('ready')
  await redis.hset(namesOf(filter).meta, 'state', 'rebuilding')
  expect(await codeOf(filter.clear())).toBe('BLOOM_LOCKED')
  await filter.destroy()
})

test('a Cluster whose startup nodes are all dead: calls reject in bounded time, not never', async () => {
  const { Cluster } = await import('ioredis')
  const { freePort } = await import('../../../test-support/redis-servers.js')
  const dead = new Cluster([{ host: '127.0.0.1', port: await freePort() }], { clusterRetryStrategy: () => 200 })
  dead.on('error', () => {})
  try {
    const start = performance.now()
    expect(await codeOf(RedisBloomFilter.create(dead, uniqueName('dead'), { capacity: 100, errorRate: 0.01, timeout: 500 }))).toBe('BLOOM_STORE_UNAVAILABLE')
    expect(await codeOf(RedisBloomFilter.open(dead, uniqueName('dead'), { timeout: 500 }))).toBe('BLOOM_STORE_UNAVAILABLE')
    expect(performance.now() - start).toBeLessThan(2500)
  } finally {
    dead.disconnect()
  }
})
