import { Redis } from 'ioredis'
import { expect, test } from 'vitest'
import { checkParameters, decodeSnapshot, snapshotFormat } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { startRedisServer } from '../../../test-support/redis-servers.js'
import { bothDeployments, errorOf, fastFail, namesOf, uniqueName } from './support/clients.js'

const { redis, cluster } = bothDeployments()

const members = Array.from({ length: 5000 }, (_, i) => `member:${i}`)
const probes = Array.from({ length: 20_000 }, (_, i) => `probe:${i}`)

test.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('Redis → memory → Redis: same bits, same answers (%s)', async (_, client) => {
  const filter = await RedisBloomFilter.create(client, uniqueName('snap'), { capacity: 5000, errorRate: 0.01, shards: 5, seed: 1234 })
  await filter.addMany(members)
  const snapshot = await filter.export()
  const memory = await MemoryBloomFilter.import(snapshot)
  expect(memory.parameters).toEqual(filter.parameters)
  const redisAnswers = await filter.hasMany(probes)
  expect(memory.hasMany(probes)).toEqual(redisAnswers)
  expect(memory.hasMany(members).every(Boolean)).toBe(true)
  // The shard keys hold the payload as-is (plus the 4-byte marker).
  const shard0 = await client.getBuffer(namesOf(filter).shard(0))
  const payload = decodeSnapshot(snapshot).payload
  const shardBytes = filter.parameters.bits / filter.parameters.shards / 8
  expect(new Uint8Array(shard0!.subarray(0, shardBytes))).toEqual(payload.slice(0, shardBytes))

  memory.addMany(probes.slice(0, 100))
  const back = await RedisBloomFilter.import(client, uniqueName('snap-back'), memory.export(), { kind: 'fixed' })
  expect(await back.hasMany(probes)).toEqual(memory.hasMany(probes))
  expect(new Uint8Array(await back.export())).toEqual(new Uint8Array(memory.export()))
  await Promise.all([filter.destroy(), back.destroy()])
})

test('import streams chunks of any size and replaces the bits of an existing filter with the same parameters', async () => {
  const source = await MemoryBloomFilter.create({ capacity: 5000, errorRate: 0.01, shards: 3 })
  source.addMany(members)
  const bytes = source.export()
  async function* pieces(size: number) {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
  }
  const name = uniqueName('stream')
  const target = await RedisBloomFilter.fromParameters(redis, name, source.parameters)
  await target.add('only-in-old')
  // While the import runs, the old filter stays usable and open() does not wait for it.
  let resume!: () => void
  const paused = new Promise<void>((resolve) => (resume = resolve))
  async function* pausedHalfway() {
    let i = 0
    for await (const piece of pieces(777)) {
      if (i++ === 3) await paused
      yield piece
    }
  }
  const importing = RedisBloomFilter.import(redis, name, pausedHalfway(), { kind: 'fixed' })
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect((await target.info()).state).toBe('replacing')
  expect(await (await RedisBloomFilter.open(redis, name, { lockWait: 0, kind: 'fixed' })).has('only-in-old')).toBe(true)
  resume()
  const imported = await importing
  expect(imported.epoch).toBe(target.epoch)
  expect(await target.hasMany(members)).toEqual(members.map(() => true))
  expect(await target.has('only-in-old')).toBe(source.has('only-in-old'))
  expect((await target.info()).generation).toBe(2)
  // exportChunks streams the same bytes back.
  const chunks: Uint8Array[] = []
  for await (const chunk of imported.exportChunks()) chunks.push(chunk)
  expect(Buffer.concat(chunks).equals(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length))).toBe(true)
  await imported.destroy()
})

test('a bad snapshot never yields a filter and leaves an existing one untouched', async () => {
  const source = await MemoryBloomFilter.create({ capacity: 2000, errorRate: 0.01, shards: 2 })
  source.addMany(members.slice(0, 2000))
  const good = source.export()
  const flipped = good.slice()
  flipped[100] ^= 0x10
  const fresh = uniqueName('bad-fresh')
  expect((await errorOf(RedisBloomFilter.import(redis, fresh, flipped))).code).toBe('BLOOM_CORRUPT_SNAPSHOT')
  expect((await errorOf(RedisBloomFilter.import(redis, fresh, good.subarray(0, good.length - 9)))).code).toBe('BLOOM_CORRUPT_SNAPSHOT')
  expect((await errorOf(RedisBloomFilter.import(redis, fresh, new Uint8Array(10)))).code).toBe('BLOOM_CORRUPT_SNAPSHOT')
  expect((await errorOf(RedisBloomFilter.import(redis, fresh, 'nope' as unknown as Uint8Array))).code).toBe('BLOOM_INVALID_PARAMETER')
  expect(await redis.keys(`${fresh}*`)).toEqual([])

  const existing = uniqueName('bad-existing')
  const filter = await RedisBloomFilter.fromParameters(redis, existing, source.parameters)
  await filter.addMany(['kept:1', 'kept:2'])
  expect((await errorOf(RedisBloomFilter.import(redis, existing, flipped))).code).toBe('BLOOM_CORRUPT_SNAPSHOT')
  expect(await filter.hasMany(['kept:1', 'kept:2'])).toEqual([true, true])
  expect((await filter.info()).state).toBe('ready')
  expect(await redis.exists(namesOf(filter).nextShard(0), namesOf(filter).nextShard(1))).toBe(0)

  const other = await MemoryBloomFilter.create({ capacity: 3000, errorRate: 0.01, shards: 2 })
  expect((await errorOf(RedisBloomFilter.import(redis, existing, other.export()))).code).toBe('BLOOM_INCOMPATIBLE')
  await filter.destroy()
})

test('merge ORs a memory filter into a Redis one', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('merge'), { capacity: 5000, errorRate: 0.01, shards: 2 })
  const other = await MemoryBloomFilter.fromParameters(filter.parameters)
  await filter.addMany(members.slice(0, 2500))
  other.addMany(members.slice(2500))
  await filter.merge(other)
  expect((await filter.hasMany(members)).every(Boolean)).toBe(true)
  await filter.destroy()
})

test('a snapshot whose header promises far more than it holds is refused, and Redis never holds what it promised (whole, or streamed)', async () => {
  // A server of its own, so that its peak memory is this test's alone.
  const server = await startRedisServer()
  const client = new Redis({ host: server.host, port: server.port, ...fastFail })
  client.on('error', () => {})
  const peak = async () => Number(/used_memory_peak:(\d+)/.exec(await client.info('memory'))![1])
  try {
    // 64 MiB of bits declared, 1000 bytes sent.
    const header = snapshotFormat.encodeSnapshotHeader({ parameters: checkParameters({ bits: 2 ** 29, hashes: 7, shards: 1, seed: 1, layout: 'blocked' }), items: 0 })
    const whole = new Uint8Array(header.length + 1000)
    whole.set(header)
    const before = await peak()
    await expect(RedisBloomFilter.import(client, uniqueName('promised'), whole)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_SNAPSHOT', message: expect.stringContaining('its header describes') })
    await expect(RedisBloomFilter.import(client, uniqueName('promised-stream'), [header, new Uint8Array(1000)])).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_SNAPSHOT' })
    // At most one allocation step (4 MiB) beyond the bytes sent, never the 64 MiB promised.
    expect((await peak()) - before).toBeLessThan(16 * 2 ** 20)
    expect(await client.dbsize()).toBe(0)
  } finally {
    client.disconnect()
    await server.stop()
  }
})
