import { describe, expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, commandsOf, namesOf, uniqueName } from './support/clients.js'

const { redis, cluster } = bothDeployments()


const count = (names: string[], pattern: RegExp) => names.filter((name) => pattern.test(name)).length

describe.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('block reads on %s', (topology, client) => {
  test('answer exactly as BITFIELD batches, with one script call per 256 keys (per shard on a Cluster), and write only keys not yet present', async () => {
    const parameters = { bits: 4 * 512 * 64, hashes: 7, shards: 4, seed: 7, layout: 'blocked' as const }
    const perBit = await RedisBloomFilter.fromParameters(client, uniqueName('per-bit'), parameters, { scanBytesPerKey: 0, blockReads: false, batchConnection: false })
    const blocks = await RedisBloomFilter.fromParameters(client, uniqueName('blocks'), parameters, { scanBytesPerKey: 0, batchConnection: false })
    // 750 distinct keys, a third of them twice in the same batch.
    const keys = Array.from({ length: 1000 }, (_, i) => `k:${i % 750}`)
    const added = [await perBit.addMany(keys)]
    const firstFill = await commandsOf(client, async () => added.push(await blocks.addMany(keys)))
    expect(added[1]).toEqual(added[0])
    expect(added[0][750]).toBe(false) // the second 'k:0' of the batch
    expect(added[0].filter(Boolean).length).toBeGreaterThan(700)
    const probes = [...keys.slice(0, 750), ...Array.from({ length: 250 }, (_, i) => `p:${i}`)]
    const found = [await perBit.hasMany(probes)]
    const reads = await commandsOf(client, async () => found.push(await blocks.hasMany(probes)))
    expect(found[1]).toEqual(found[0])
    expect(found[0].slice(0, 750).every(Boolean)).toBe(true)
    expect(count(reads, /^bitfield/)).toBe(0)
    // Standalone: ⌈1000 / 256⌉ calls. Cluster: per shard, ⌈its keys / 256⌉ (~250 keys a shard).
    if (topology === 'standalone') expect(count(reads, /^evalsha$/)).toBe(4)
    else expect(count(reads, /^evalsha$/)).toBeGreaterThanOrEqual(4)
    expect(count(reads, /^evalsha$/)).toBeLessThanOrEqual(8)
    // A batch of keys already present (the previous batch was mostly new, so this one is still
    // written; the next one reads first) is answered "not new" without a write.
    expect((await blocks.addMany(keys.slice(0, 500))).some(Boolean)).toBe(false)
    const readd = await commandsOf(client, async () => expect((await blocks.addMany(keys.slice(0, 500))).some(Boolean)).toBe(false))
    expect(count(readd, /^bitfield/)).toBe(0)
    // Mixed: new keys among present ones are written, and said to be new.
    const mixed = [...keys.slice(0, 400), 'new:1', 'new:2', 'new:1']
    const mixedCommands = await commandsOf(client, async () => expect(await blocks.addMany(mixed)).toEqual([...Array(400).fill(false), true, true, false]))
    expect(count(mixedCommands, /^bitfield$/)).toBeGreaterThanOrEqual(1)
    expect(count(mixedCommands, /^bitfield$/)).toBeLessThanOrEqual(2)
    await perBit.addMany(mixed)
    expect(new Uint8Array(await blocks.export()).subarray(40)).toEqual(new Uint8Array(await perBit.export()).subarray(40))
    // The first fill went straight to BITFIELD after the first script call found nothing present.
    expect(count(firstFill, /^bitfield$/)).toBeGreaterThan(0)
    await Promise.all([perBit.destroy(), blocks.destroy()])
  })

  test('a server that lost its scripts (restart, failover, SCRIPT FLUSH) gets the script again', async () => {
    const filter = await RedisBloomFilter.fromParameters(client, uniqueName('noscript'), { bits: 2 * 512 * 16, hashes: 5, shards: 2, seed: 1, layout: 'blocked' }, { scanBytesPerKey: 0, batchConnection: false })
    await filter.addMany(['a', 'b', 'c'])
    expect(await filter.hasMany(['a', 'b', 'c', 'd'])).toEqual([true, true, true, false])
    const nodes = client === cluster ? cluster.nodes('master') : [redis]
    await Promise.all(nodes.map((node) => node.script('FLUSH')))
    expect(await filter.hasMany(['a', 'b', 'c', 'd'])).toEqual([true, true, true, false])
    await filter.destroy()
  })
})

test('single calls from separate events wait (at most coalesceWait ms) for the batch in flight and then travel together', async () => {
  const parameters = { bits: 512 * 64, hashes: 7, shards: 1, seed: 3, layout: 'blocked' as const }
  const name = uniqueName('coalesce-wait')
  const keys = Array.from({ length: 300 }, (_, i) => `k:${i}`)
  // Script calls through the client are counted, so these filters take the client's connection.
  const gathered = await RedisBloomFilter.fromParameters(redis, name, parameters, { scanBytesPerKey: 0, batchConnection: false })
  await gathered.addMany(keys)
  const eager = await RedisBloomFilter.open(redis, name, { scanBytesPerKey: 0, coalesceWait: 0, batchConnection: false, kind: 'fixed' })
  /** 300 `has` calls, each from its own event (as requests arriving on a socket): how many script calls they cost. */
  const callsFromEvents = async (filter: RedisBloomFilter) =>
    count(
      await commandsOf(redis, async () => {
        const answers = await Promise.all(keys.map((key) => new Promise<boolean>((resolve, reject) => setImmediate(() => filter.has(key).then(resolve, reject)))))
        expect(answers.every(Boolean)).toBe(true)
      }),
      /^evalsha$/,
    )
  expect(await callsFromEvents(eager)).toBe(300)
  expect(await callsFromEvents(gathered)).toBeLessThan(30)
  await expect(RedisBloomFilter.open(redis, name, { coalesceWait: -1 })).rejects.toThrow(/coalesceWait/)
  await gathered.destroy()
})

test('on a Cluster, one block read per node spans its shards; a node that refuses one (a slot moved) is read shard by shard', async () => {
  const parameters = { bits: 12 * 512 * 32, hashes: 7, shards: 12, seed: 5, layout: 'blocked' as const }
  const filter = await RedisBloomFilter.fromParameters(cluster, uniqueName('per-node'), parameters, { scanBytesPerKey: 0, batchConnection: false })
  const keys = Array.from({ length: 200 }, (_, i) => `k:${i}`)
  await filter.addMany(keys)
  const reads = await commandsOf(cluster, async () => expect((await filter.hasMany(keys)).every(Boolean)).toBe(true))
  expect(count(reads, /^evalsha$/)).toBe(3)
  // Make the client believe shard 1's slot lives on shard 0's node: its read with shard 0's is
  // refused by the node ("non local key"), and the store falls back to one read per shard.
  const slots = (cluster as unknown as { slots: string[][] }).slots
  const layout = namesOf(filter)
  const owner = (shard: number) => slots[layout.slot(shard)][0]
  const other = [...Array(12).keys()].find((shard) => owner(shard) !== owner(0))!
  const saved = slots[layout.slot(other)]
  slots[layout.slot(other)] = [owner(0)]
  try {
    const fallback = await commandsOf(cluster, async () => expect((await filter.hasMany(keys)).every(Boolean)).toBe(true))
    expect(count(fallback, /^evalsha$/)).toBeGreaterThan(3)
    const after = await commandsOf(cluster, async () => expect((await filter.hasMany(keys)).every(Boolean)).toBe(true))
    expect(count(after, /^evalsha$/)).toBe(12)
  } finally {
    slots[layout.slot(other)] = saved
  }
  await filter.destroy()
})

test.each([
  ['client connection', false],
  ['batch connections', true],
])('on a Cluster, a key twice in one batch is new at its first place even when its shard spans calls answered out of order (%s)', async (_, batchConnection) => {
  const parameters = { bits: 12 * 512 * 64, hashes: 7, shards: 12, seed: 9, layout: 'blocked' as const }
  const perBit = await RedisBloomFilter.fromParameters(cluster, uniqueName('order-per-bit'), parameters, { scanBytesPerKey: 0, blockReads: false, batchConnection: false })
  const blocks = await RedisBloomFilter.fromParameters(cluster, uniqueName('order-blocks'), parameters, { scanBytesPerKey: 0, batchConnection })
  // 3000 places, 1000 distinct keys: every key three times, far apart, so each node's keys fill
  // several 256-key calls and a key's places fall in different calls.
  const keys = Array.from({ length: 3000 }, (_, i) => `d:${i % 1000}`)
  const expected = await perBit.addMany(keys)
  // Make the client believe one shard's slot lives on shard 0's node: the calls that mix them are
  // refused and read again shard by shard (a second round trip), while the node's other calls are
  // answered at once — the order in which reads come back is no longer the batch's order. Over
  // the batch connections the node answers that shard MOVED, and its keys go through the client.
  const slots = (cluster as unknown as { slots: string[][] }).slots
  const names = namesOf(blocks)
  const owner = (shard: number) => slots[names.slot(shard)][0]
  const other = [...Array(12).keys()].find((shard) => owner(shard) !== owner(0))!
  const saved = slots[names.slot(other)]
  slots[names.slot(other)] = [owner(0)]
  try {
    expect(await blocks.addMany(keys)).toEqual(expected)
  } finally {
    slots[names.slot(other)] = saved
  }
  expect(expected.slice(0, 1000).every(Boolean)).toBe(true)
  expect(expected.slice(1000).some(Boolean)).toBe(false)
  await Promise.all([perBit.destroy(), blocks.destroy()])
})
