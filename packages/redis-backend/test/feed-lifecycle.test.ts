// A filter's feeds through its life (docs/SPEC.md 9.12): store format 2 and its option checks, a
// reset in the same script as every replacement of a shard (with the shard's TTL), trimming,
// destroy and TTLs, and what a damaged or lost feed does to an add.
import { expect, test } from 'vitest'
import { PositionBatch } from '@bloomkit/core/store'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { KeyNames } from '../src/layout/key-names.js'
import { storeOf } from '../src/redis-bloom-filter.js'
import type { RedisClient } from '../src/wire/client.js'
import { bothDeployments, errorOf, namesOf, uniqueName } from './support/clients.js'
import { allFeeds, feedEntries, keyRange } from './support/feeds.js'

const { redis, deployments: CLIENTS } = bothDeployments()

const SIZE = { capacity: 5000, errorRate: 0.01, shards: 3 }

/** Each feed's entry kinds, and the IDs of their first entries. */
async function feedsOf(client: RedisClient, filter: RedisBloomFilter) {
  const feeds = await allFeeds(client, namesOf(filter), filter.parameters.shards)
  return { kinds: feeds.map((entries) => entries.map((entry) => entry.kind)), first: feeds.map((entries) => entries[0]?.id) }
}

test('a filter with a feed is store format 2 with its feedLength; one without stays format 1 and has no feed keys', async () => {
  const fed = await RedisBloomFilter.create(redis, uniqueName('format2'), { ...SIZE, feed: true })
  expect(await redis.hmget(`${fed.name}:meta`, 'format', 'feedLength')).toEqual(['2', '1024'])
  expect((await fed.info()).feedLength).toBe(1024)
  const feeds = await allFeeds(redis, namesOf(fed), 3)
  for (const entries of feeds) {
    expect(entries.map((entry) => entry.kind)).toEqual(['reset'])
    expect(entries[0].tag.length).toBe(8)
  }
  expect(new Set(feeds.map((entries) => Buffer.from(entries[0].tag).toString('hex'))).size, 'every reset has its own tag').toBe(3)
  const short = await RedisBloomFilter.create(redis, uniqueName('format2-short'), { ...SIZE, feed: true, feedLength: 16 })
  expect(await redis.hget(`${short.name}:meta`, 'feedLength')).toBe('16')

  const plain = await RedisBloomFilter.create(redis, uniqueName('format1'), SIZE)
  await plain.addMany(keyRange('k', 0, 100))
  expect(await redis.hget(`${plain.name}:meta`, 'format')).toBe('1')
  expect((await plain.info()).feedLength).toBeUndefined()
  const names = namesOf(plain)
  expect(await redis.exists(...[0, 1, 2].map((shard) => names.feed(shard)))).toBe(0)
  await Promise.all([fed.destroy(), short.destroy(), plain.destroy()])
})

test('feed options are checked: booleans and ranges, feedLength only with a feed, no feed for counting filters', async () => {
  const name = uniqueName('feed-options')
  expect((await errorOf(RedisBloomFilter.create(redis, name, { ...SIZE, feed: 'yes' as unknown as boolean }))).message).toMatch(/^feed must be true or false/)
  for (const feedLength of [0, -1, 1.5, 2 ** 31]) {
    const error = await errorOf(RedisBloomFilter.create(redis, name, { ...SIZE, feed: true, feedLength }))
    expect(error.code).toBe('BLOOM_INVALID_PARAMETER')
    expect(error.message).toMatch(/^feedLength must be an integer from 1 to 2147483647/)
  }
  expect((await errorOf(RedisBloomFilter.create(redis, name, { ...SIZE, feedLength: 10 }))).message).toMatch(/^feedLength .*feed: true/)
  const counting = await errorOf(RedisBloomFilter.create(redis, name, { ...SIZE, counting: true, feed: true }))
  expect(counting.code).toBe('BLOOM_INVALID_PARAMETER')
  expect(counting.message).toMatch(/^feed: a counting filter has no feed/)
  expect(await redis.exists(`${name}:meta`)).toBe(0)
})

test('create and import ask for a feed: an existing filter without one is refused, one with one is opened as it is', async () => {
  const plain = await RedisBloomFilter.create(redis, uniqueName('no-feed'), SIZE)
  const refused = await errorOf(RedisBloomFilter.create(redis, plain.name, { ...SIZE, feed: true }))
  expect(refused.code).toBe('BLOOM_INCOMPATIBLE')
  expect(refused.message).toMatch(/exists without a feed/)
  const snapshot = await plain.export()
  expect((await errorOf(RedisBloomFilter.import(redis, plain.name, snapshot, { feed: true }))).code).toBe('BLOOM_INCOMPATIBLE')

  const fed = await RedisBloomFilter.create(redis, uniqueName('feed'), { ...SIZE, feed: true, feedLength: 50 })
  const again = await RedisBloomFilter.create(redis, fed.name, { ...SIZE, seed: fed.parameters.seed })
  expect((await again.info()).feedLength, 'the stored feedLength stands').toBe(50)
  await again.add('through the second instance')
  const entries = (await allFeeds(redis, namesOf(fed), 3)).flat()
  expect(entries.filter((entry) => entry.kind === 'add')).toHaveLength(1)

  // Import into a free name: a feed only when asked for; over an existing filter: its own.
  const imported = await RedisBloomFilter.import(redis, uniqueName('imported'), snapshot, { feed: true, kind: 'fixed' })
  expect(await redis.hmget(`${imported.name}:meta`, 'format', 'feedLength')).toEqual(['2', '1024'])
  expect((await feedsOf(redis, imported)).kinds).toEqual([['reset'], ['reset'], ['reset']])
  const importedPlain = await RedisBloomFilter.import(redis, uniqueName('imported-plain'), snapshot, { kind: 'fixed' })
  expect(await redis.hget(`${importedPlain.name}:meta`, 'format')).toBe('1')
  await Promise.all([plain.destroy(), fed.destroy(), imported.destroy(), importedPlain.destroy()])
})

test('a format a release does not know is BLOOM_UNSUPPORTED_VERSION; a format-2 meta without a valid feedLength, or a counting one, is refused', async () => {
  const fed = await RedisBloomFilter.create(redis, uniqueName('formats'), { ...SIZE, feed: true })
  const meta = `${fed.name}:meta`
  await redis.hdel(meta, 'check')
  await redis.hset(meta, 'format', '3')
  expect((await errorOf(RedisBloomFilter.open(redis, fed.name))).code).toBe('BLOOM_UNSUPPORTED_VERSION')
  await redis.hset(meta, 'format', '2', 'feedLength', '0')
  expect((await errorOf(RedisBloomFilter.open(redis, fed.name))).code).toBe('BLOOM_CORRUPT_STORE')
  await redis.hdel(meta, 'feedLength')
  expect((await errorOf(RedisBloomFilter.open(redis, fed.name))).code).toBe('BLOOM_CORRUPT_STORE')
  await redis.hset(meta, 'feedLength', '7', 'kind', 'counting')
  expect((await errorOf(RedisBloomFilter.open(redis, fed.name))).code).toBe('BLOOM_UNSUPPORTED_VERSION')
  await redis.hdel(meta, 'kind')
  expect((await (await RedisBloomFilter.open(redis, fed.name, { kind: 'fixed' })).info()).feedLength).toBe(7)
  // An instance opened as format 1 compares `format` beside every batch: it refuses to write around the feed.
  await redis.hset(meta, 'format', '1')
  const formatOne = await RedisBloomFilter.open(redis, fed.name, { kind: 'fixed' })
  await redis.hset(meta, 'format', '2')
  expect((await errorOf(formatOne.add('x'))).code).toBe('BLOOM_CORRUPT_STORE')
  await fed.destroy()
})

test.each(CLIENTS)('every replacement resets each shard feed in the swap, with the shard TTL: clear, rebuild, import, import with new parameters, merge, writeShard (%s)', async (_, client) => {
  const name = uniqueName('feed-resets')
  const filter = await RedisBloomFilter.create(client, name, { ...SIZE, feed: true, ttl: 1000 })
  const names = namesOf(filter)
  const resetEach = async (what: string, replace: () => Promise<unknown>, target = filter) => {
    await target.addMany(keyRange(what, 0, 200))
    const before = await feedsOf(client, target)
    expect(before.kinds.flat().filter((kind) => kind === 'add').length, `adds before ${what}`).toBeGreaterThan(0)
    await replace()
    const after = await feedsOf(client, target)
    expect(after.kinds, `each feed after ${what}`).toEqual(Array.from({ length: target.parameters.shards }, () => ['reset']))
    for (let shard = 0; shard < target.parameters.shards; shard++) {
      expect(after.first[shard]).not.toBe(before.first[shard])
      const [shardTtl, feedTtl] = await Promise.all([client.pttl(namesOf(target).shard(shard)), client.pttl(namesOf(target).feed(shard))])
      expect(feedTtl, `TTL of shard ${shard}'s feed after ${what}`).toBeGreaterThan(0)
      expect(Math.abs(feedTtl - shardTtl)).toBeLessThan(2000)
    }
  }
  await resetEach('clear', () => filter.clear())
  await resetEach('rebuild', () => filter.rebuild(keyRange('kept', 0, 100)))
  const snapshot = await filter.export()
  await resetEach('import', () => RedisBloomFilter.import(client, name, snapshot, { kind: 'fixed' }))
  const other = await RedisBloomFilter.fromParameters(client, uniqueName('feed-merge'), filter.parameters)
  await other.addMany(keyRange('merged', 0, 50))
  await resetEach('merge', () => filter.merge(other))
  const store = storeOf(filter)
  await resetEach('writeShard', () => store.writeShard(0, 0, new Uint8Array(8)).then(() => store.writeShard(1, 0, new Uint8Array(8))).then(() => store.writeShard(2, 0, new Uint8Array(8))))

  // New parameters: the new filter's shards are other keys; their feeds start reset, the old ones' go.
  const wider = await RedisBloomFilter.fromParameters(client, uniqueName('feed-wider'), { ...filter.parameters, shards: 5, bits: filter.parameters.bits / 3 * 5 })
  await wider.addMany(keyRange('wider', 0, 100))
  const replaced = await RedisBloomFilter.import(client, name, await wider.export(), { replaceParameters: true, kind: 'fixed' })
  expect((await replaced.info()).feedLength, 'the replaced filter keeps its feed').toBe(1024)
  expect((await feedsOf(client, replaced)).kinds).toEqual(Array.from({ length: 5 }, () => ['reset']))
  const newNames = namesOf(replaced)
  const kept = new Set(Array.from({ length: 5 }, (_, shard) => newNames.feed(shard)))
  for (let shard = 0; shard < 3; shard++) if (!kept.has(names.feed(shard))) expect(await client.exists(names.feed(shard)), `old feed ${shard}`).toBe(0)
  await replaced.addMany(keyRange('after', 0, 50))
  expect((await allFeeds(client, newNames, 5)).flat().filter((entry) => entry.kind === 'add').length).toBeGreaterThan(0)
  await Promise.all([replaced.destroy(), other.destroy(), wider.destroy()])
  await filter.close()
})

test.each(CLIENTS)('destroy removes the feeds (instance, static, and what a killed import with new parameters left); setTtl covers them (%s)', async (_, client) => {
  const filter = await RedisBloomFilter.create(client, uniqueName('feed-destroy'), { ...SIZE, feed: true })
  const names = namesOf(filter)
  const feeds = [0, 1, 2].map((shard) => names.feed(shard))
  await filter.addMany(keyRange('k', 0, 100))
  await filter.setTtl(100)
  for (const feed of feeds) expect(await client.pttl(feed)).toBeGreaterThan(90_000)
  await filter.setTtl(null)
  for (const feed of feeds) expect(await client.pttl(feed)).toBe(-1)
  await filter.destroy()
  for (const feed of feeds) expect(await client.exists(feed)).toBe(0)

  const other = await RedisBloomFilter.create(client, uniqueName('feed-destroy-static'), { ...SIZE, feed: true })
  const otherFeeds = [0, 1, 2].map((shard) => namesOf(other).feed(shard))
  // A killed import with new parameters (2 shards) left its feeds behind: `retired` names them.
  const leftover = new KeyNames(other.name, 2)
  await client.hset(`${other.name}:meta`, 'retired', '2')
  for (const shard of [0, 1]) await client.xadd(leftover.feed(shard), '*', 'r', 'x')
  expect(await RedisBloomFilter.destroy(client, other.name)).toBe(true)
  for (const feed of [...otherFeeds, leftover.feed(0), leftover.feed(1)]) expect(await client.exists(feed)).toBe(0)
  await other.close()
})

test('feeds are trimmed to about feedLength entries (Redis trims whole stream nodes)', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('feed-trim'), { capacity: 1000, errorRate: 0.01, shards: 1, feed: true, feedLength: 1 })
  for (const key of keyRange('k', 0, 400)) await filter.add(key)
  const length = await redis.xlen(namesOf(filter).feed(0))
  expect(length).toBeGreaterThan(0)
  // Up to one node of 100 entries (stream-node-max-entries) stays besides the newest.
  expect(length).toBeLessThanOrEqual(101)
  await filter.destroy()
})

test.each(CLIENTS)('a lost shard with its feed: the add fails with BLOOM_DATA_LOST and no feed is made again; a feed of another type fails the add (%s)', async (_, client) => {
  for (const options of [{}, { batchConnection: false }, { scanBytesPerKey: 2 ** 31 - 1 }]) {
    const filter = await RedisBloomFilter.create(client, uniqueName('feed-lost'), { ...SIZE, shards: 1, feed: true, ...options })
    const names = namesOf(filter)
    await client.del(names.shard(0), names.feed(0))
    expect((await errorOf(filter.addMany(keyRange('k', 0, 10)))).code).toBe('BLOOM_DATA_LOST')
    expect(await client.exists(names.feed(0)), `feed made again (${JSON.stringify(options)})`).toBe(0)
    await filter.destroy()

    const damaged = await RedisBloomFilter.create(client, uniqueName('feed-wrongtype'), { ...SIZE, shards: 1, feed: true, ...options })
    await client.del(namesOf(damaged).feed(0))
    await client.set(namesOf(damaged).feed(0), 'not a stream')
    expect((await errorOf(damaged.addMany(keyRange('k', 0, 10)))).code, `${JSON.stringify(options)}`).toBe('BLOOM_CORRUPT_STORE')
    await damaged.destroy()
  }
})

test('a batch whose hash pairs were not filled is refused by a filter with a feed (it would record other keys)', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('feed-pairs'), { ...SIZE, shards: 1, feed: true })
  const batch = new PositionBatch(1, filter.parameters.hashes)
  batch.positions.set(Array.from({ length: filter.parameters.hashes }, (_, i) => i * 3))
  batch.size = 1
  const error = await errorOf(storeOf(filter).setBits(batch, new Uint8Array(1)))
  expect(error.code).toBe('BLOOM_INVALID_PARAMETER')
  expect(error.message).toMatch(/^batch: /)
  expect((await feedEntries(redis, namesOf(filter).feed(0))).map((entry) => entry.kind)).toEqual(['reset'])
  await filter.destroy()
})

test.each(CLIENTS)('a flagged add whose next key is gone writes the live shard once more, and that write appends its own entry (%s)', async (_, client) => {
  const name = uniqueName('feed-second-write')
  const created = await RedisBloomFilter.fromParameters(client, name, { bits: 8192, hashes: 5, shards: 1, seed: 3, layout: 'classic' }, { feed: true })
  const filter = await RedisBloomFilter.open(client, name, { kind: 'fixed', scanBytesPerKey: 0, blockReads: false, batchConnection: false })
  const names = namesOf(filter)
  // A rebuild flagged the live shard, and its next key is gone when the writer copies: the write
  // after the failed copy may land in a shard swapped in meanwhile, whose feed was reset.
  const marker = Buffer.alloc(4)
  marker.writeUInt32BE(2 * filter.epoch + 1)
  await client.setrange(names.shard(0), 8192 / 8, marker)
  await client.del(names.nextShard(0))
  expect(await filter.add('during')).toBe(true)
  const adds = (await feedEntries(client, names.feed(0))).filter((entry) => entry.kind === 'add')
  expect(adds.map((entry) => entry.pairs.length / 2), 'the first live write and the second each recorded the key').toEqual([1, 1])
  expect(adds[1].pairs).toEqual(adds[0].pairs)
  await Promise.all([filter.close(), created.destroy()])
})
