import { afterAll, describe, expect, inject, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { startRedisServer, type RedisServerHandle } from '../../../test-support/redis-servers.js'
import { clusterClient, commandsOf, standaloneClient, uniqueName } from './support/clients.js'
import { replyEnd } from '../src/wire/resp-reader.js'

const redis = standaloneClient()
const cluster = clusterClient()
const cleanups: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await Promise.all([redis.quit(), cluster.quit()])
})

/** Redis's own count of calls per command, summed over the masters. */
async function commandStats(client: typeof redis | typeof cluster): Promise<Map<string, number>> {
  const nodes = client === cluster ? cluster.nodes('master') : [redis]
  const calls = new Map<string, number>()
  for (const node of nodes) {
    for (const [, name, count] of (await node.info('commandstats')).matchAll(/cmdstat_(\w+):calls=(\d+)/g)) calls.set(name, (calls.get(name) ?? 0) + Number(count))
  }
  return calls
}

/** Calls of each command that `body` made Redis run (other tests share the server: lower bounds only). */
async function commandsRun(client: typeof redis | typeof cluster, body: () => Promise<unknown>): Promise<(name: string) => number> {
  const before = await commandStats(client)
  await body()
  const after = await commandStats(client)
  return (name) => (after.get(name) ?? 0) - (before.get(name) ?? 0)
}

const through = (names: string[]) => names.filter((name) => /^(bitfield|bitfield_ro|evalsha|eval|getrange|multi|exec)$/.test(name))

describe.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('batch connections on %s', (topology, client) => {
  test('batches leave over them, not the client, and answer and set bits exactly as the client path (duplicates, present and new keys)', async () => {
    const parameters = { bits: 24 * 512 * 64, hashes: 7, shards: 24, seed: 11, layout: 'blocked' as const }
    const viaClient = await RedisBloomFilter.fromParameters(client, uniqueName('via-client'), parameters, { scanBytesPerKey: 0, batchConnection: false })
    const direct = await RedisBloomFilter.fromParameters(client, uniqueName('direct'), parameters, { scanBytesPerKey: 0 })
    // 1500 places, 1000 distinct keys: a key twice in a batch is new at its first place only.
    const keys = Array.from({ length: 1500 }, (_, i) => `k:${i % 1000}`)
    const expected = await viaClient.addMany(keys)
    const added: boolean[][] = []
    const sentThroughClient = await commandsOf(client, async () => added.push(await direct.addMany(keys)))
    expect(added[0]).toEqual(expected)
    expect(expected.slice(1000).some(Boolean)).toBe(false)
    expect(through(sentThroughClient)).toEqual([])
    const probes = [...keys.slice(0, 1000), ...Array.from({ length: 1000 }, (_, i) => `p:${i}`)]
    const found: boolean[][] = []
    const ran = await commandsRun(client, async () => {
      const names = await commandsOf(client, async () => found.push(await direct.hasMany(probes)))
      expect(through(names)).toEqual([])
    })
    expect(found[0]).toEqual(await viaClient.hasMany(probes))
    expect(found[0].slice(0, 1000).every(Boolean)).toBe(true)
    // One GETRANGE per key and one per shard (its marker), inside transactions.
    expect(ran('getrange')).toBeGreaterThanOrEqual(2000 + 24)
    expect(ran('exec')).toBeGreaterThanOrEqual(topology === 'standalone' ? Math.ceil(2000 / 256) : 24)
    // Present keys after a batch of present keys: read first, nothing written.
    await direct.addMany(keys.slice(0, 600))
    const readd = await commandsRun(client, async () => expect((await direct.addMany(keys.slice(0, 600))).some(Boolean)).toBe(false))
    expect(readd('getrange')).toBeGreaterThanOrEqual(600)
    // Mixed: the new keys among present ones are written and said to be new, in input order.
    const mixed = [...keys.slice(0, 400), 'new:1', 'new:2', 'new:1']
    expect(await direct.addMany(mixed)).toEqual([...Array(400).fill(false), true, true, false])
    await viaClient.addMany(mixed)
    expect(new Uint8Array(await direct.export()).subarray(40)).toEqual(new Uint8Array(await viaClient.export()).subarray(40))
    // BITFIELD_RO and BITFIELD per bit over the batch connections give the same answers.
    const perBit = await RedisBloomFilter.open(client, direct.name, { scanBytesPerKey: 0, blockReads: false })
    expect(await perBit.hasMany(probes)).toEqual(found[0])
    expect(await perBit.addMany(['new:1', 'new:3'])).toEqual([false, true])
    await Promise.all([viaClient.destroy(), direct.destroy()])
  })

  test('large batches whose replies arrive in many pieces', async () => {
    const parameters = { bits: 8 * 512 * 1024, hashes: 7, shards: 8, seed: 12, layout: 'blocked' as const }
    const viaClient = await RedisBloomFilter.fromParameters(client, uniqueName('big-client'), parameters, { scanBytesPerKey: 0, batchConnection: false })
    const direct = await RedisBloomFilter.fromParameters(client, uniqueName('big-direct'), parameters, { scanBytesPerKey: 0 })
    const keys = Array.from({ length: 40_000 }, (_, i) => `big:${i}`)
    expect(await direct.addMany(keys)).toEqual(await viaClient.addMany(keys))
    const probes = [...keys.slice(0, 20_000), ...Array.from({ length: 20_000 }, (_, i) => `absent:${i}`)]
    expect(await direct.hasMany(probes)).toEqual(await viaClient.hasMany(probes))
    await Promise.all([viaClient.destroy(), direct.destroy()])
  })
})

// ioredis 6 speaks RESP3 when asked (`protocol: 3`), and so does its duplicate: nulls, for a meta gone, are `_`.
test.skipIf(process.env.IOREDIS_MAJOR === '5')('a client speaking RESP3 gets the same answers, and a lost meta is BLOOM_DATA_LOST', async () => {
  const { host, port } = inject('redisStandalone')
  const resp3 = new Redis({ host, port, protocol: 3, maxRetriesPerRequest: 1 })
  try {
    const name = uniqueName('resp3')
    const direct = await RedisBloomFilter.create(resp3, name, { capacity: 10_000_000, errorRate: 0.01 })
    const viaClient = await RedisBloomFilter.open(resp3, name, { batchConnection: false })
    const keys = Array.from({ length: 3000 }, (_, i) => `r:${i}`)
    expect((await direct.addMany(keys.slice(0, 2000))).filter(Boolean).length).toBe(2000)
    // A filter this empty (2 000 keys for 10M) has no false positive among 1 000 new keys in practice.
    expect(await direct.addMany(keys.slice(1000))).toEqual([...Array(1000).fill(false), ...Array(1000).fill(true)])
    const found = await direct.hasMany([...keys, 'absent'])
    expect(found).toEqual(await viaClient.hasMany([...keys, 'absent']))
    expect(found.slice(0, 3000).every(Boolean)).toBe(true)
    await resp3.del(`${name}:meta`)
    await expect(direct.hasMany(keys.slice(0, 10))).rejects.toMatchObject({ code: 'BLOOM_DATA_LOST' })
    await RedisBloomFilter.destroy(resp3, name).catch(() => undefined)
    await Promise.all(direct.keys.slice(1).map((key) => resp3.del(key)))
  } finally {
    await resp3.quit()
  }
})

test('RESP replies are delimited only once they have all arrived, in any type a client may get', () => {
  const replies = Buffer.from('+OK\r\n:12\r\n$3\r\nabc\r\n$-1\r\n*2\r\n$1\r\nx\r\n:-1\r\n*-1\r\n-ERR no\r\n_\r\n%1\r\n+a\r\n:1\r\n')
  const ends: number[] = []
  for (let at = 0; at < replies.length; at = ends[ends.length - 1]) ends.push(replyEnd(replies, at))
  expect(ends.length).toBe(9)
  expect(ends[ends.length - 1]).toBe(replies.length)
  // Cut anywhere inside the array reply: not complete yet.
  for (let cut = ends[3] + 1; cut < ends[4]; cut++) expect(replyEnd(replies.subarray(0, cut), ends[3])).toBe(-1)
})

describe('on a server of its own', () => {
  let server: RedisServerHandle
  const open: Redis[] = []
  const connect = () => {
    const client = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 1000, retryStrategy: () => 100 })
    client.on('error', () => {})
    open.push(client)
    return client
  }
  const clients = async (observer: Redis) => Number(/connected_clients:(\d+)/.exec(await observer.info('clients'))![1])

  test('a batch connection that stops answering fails its batch with BLOOM_STORE_UNAVAILABLE within the timeout; a new one serves the next batches', async () => {
    server = await startRedisServer()
    cleanups.push(() => server.stop())
    cleanups.push(async () => open.forEach((client) => client.disconnect()))
    const client = connect()
    const filter = await RedisBloomFilter.create(client, uniqueName('stalled'), { capacity: 10_000_000, errorRate: 0.01, timeout: 300 })
    const keys = Array.from({ length: 1000 }, (_, i) => `s:${i}`)
    await filter.addMany(keys)
    // The server stops (SIGSTOP): nothing answers until it continues.
    process.kill(server.pid, 'SIGSTOP')
    let stalled: unknown
    try {
      stalled = await filter.hasMany(keys).then(() => undefined, (error: unknown) => error)
    } finally {
      process.kill(server.pid, 'SIGCONT')
    }
    expect(stalled).toBeInstanceOf(BloomError)
    expect((stalled as BloomError).code).toBe('BLOOM_STORE_UNAVAILABLE')
    expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
    expect(await filter.addMany(['s:0', 's:new'])).toEqual([false, true])
  })

  test('batches take the client path while no batch connection can be opened, and the connections close with the client', async () => {
    const observer = connect()
    const client = connect()
    const filter = await RedisBloomFilter.create(client, uniqueName('refused'), { capacity: 10_000_000, errorRate: 0.01 })
    const base = await clients(observer)
    // No room for another connection: batches still work, through the client's own.
    const maxclients = (await observer.config('GET', 'maxclients'))[1]
    await observer.config('SET', 'maxclients', String(base))
    try {
      const names = await commandsOf(client, async () => expect(await filter.addMany(['a', 'b', 'a'])).toEqual([true, true, false]))
      expect(through(names).length).toBeGreaterThan(0)
      expect(await filter.hasMany(['a', 'b', 'c'])).toEqual([true, true, false])
    } finally {
      await observer.config('SET', 'maxclients', maxclients)
    }
    // Room again: after a short pause the batch connection is opened, and batches leave over it.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    await filter.hasMany(['a'])
    const names = await commandsOf(client, async () => expect(await filter.hasMany(['a', 'b', 'c'])).toEqual([true, true, false]))
    expect(through(names)).toEqual([])
    expect(await clients(observer)).toBe(base + 1)
    await filter.destroy()
    await client.quit()
    for (let i = 0; i < 50 && (await clients(observer)) > base - 1; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await clients(observer)).toBe(base - 1)
  })
})
