import { afterAll, describe, expect, test } from 'vitest'
import type { Cluster, Redis } from 'ioredis'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { clusterClient, errorOf, standaloneClient, uniqueName } from './support/clients.js'

// Issue 33 item 16, fixed filters: destroy removes every key of a filter whose meta is damaged
// (BLOOM_CORRUPT_STORE to open), and nothing of another filter; a hash that is no filter stays.

const clients: Array<[string, Redis | Cluster]> = [
  ['standalone', standaloneClient()],
  ['Cluster', clusterClient()],
]
afterAll(async () => {
  for (const [, client] of clients) await client.quit()
})

/** Every key whose name starts with `name:` (test names hold no glob characters), on every master. */
async function keysOf(client: Redis | Cluster, name: string): Promise<string[]> {
  const nodes = 'nodes' in client && typeof client.nodes === 'function' && (client as Cluster).isCluster ? (client as Cluster).nodes('master') : [client as Redis]
  const found = await Promise.all(nodes.map((node) => node.keys(`${name}:*`)))
  return found.flat().sort()
}

const keys = Array.from({ length: 200 }, (_, i) => `k${i}`)

/** The damages: each makes open fail with BLOOM_CORRUPT_STORE; the last two leave no readable shard count, the third a wrong one. */
const damages: Array<[string, Record<string, string>]> = [
  ['hashes written as 07', { hashes: '07' }],
  ['shards written as +4', { shards: '+4' }],
  ['shards written smaller, as 2 (plausible, and wrong: other tags)', { shards: '2' }],
  ['shards unreadable', { shards: 'four' }],
  ['shards beyond any filter', { shards: '99999999' }],
]

describe.each(clients)('RedisBloomFilter.destroy of a damaged meta (%s)', (_, client) => {
  test.each(damages)('%s: every shard key, its feed and the meta go; a filter named name:x stays', async (_, fields) => {
    const name = uniqueName('damaged')
    const filter = await RedisBloomFilter.create(client, name, { capacity: 2000, errorRate: 0.01, shards: 4, feed: true })
    await filter.addMany(keys)
    await filter.close()
    const neighbour = await RedisBloomFilter.create(client, `${name}:x`, { capacity: 100, errorRate: 0.01 })
    await neighbour.addMany(keys.slice(0, 10))
    const before = await keysOf(client, name)
    expect(before.filter((key) => !key.startsWith(`${name}:x:`)).length).toBeGreaterThan(4)
    await client.hset(`${name}:meta`, fields)
    expect((await errorOf(RedisBloomFilter.open(client, name))).code).toBe('BLOOM_CORRUPT_STORE')

    expect(await RedisBloomFilter.destroy(client, name)).toBe(true)
    expect((await keysOf(client, name)).filter((key) => !key.startsWith(`${name}:x:`))).toEqual([])
    expect(await RedisBloomFilter.destroy(client, name)).toBe(false)
    // The neighbour, whose keys also start with `name:`, is whole.
    expect(await (await RedisBloomFilter.open(client, `${name}:x`)).hasMany(keys.slice(0, 10))).toEqual(Array(10).fill(true))
    expect(await RedisBloomFilter.destroy(client, `${name}:x`)).toBe(true)
  })

  test('a hash with no format field is no filter: destroy refuses it and deletes nothing', async () => {
    const name = uniqueName('not-a-filter')
    await client.hset(`${name}:meta`, { shards: '1', owner: 'someone else' })
    expect((await errorOf(RedisBloomFilter.destroy(client, name))).code).toBe('BLOOM_CORRUPT_STORE')
    expect(await client.hget(`${name}:meta`, 'owner')).toBe('someone else')
    await client.del(`${name}:meta`)
  })
})
