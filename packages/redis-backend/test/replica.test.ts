// A replica of a fixed filter (docs/SPEC.md 9.13): "present" from its bits with no round trip,
// "absent" only after a barrier that began after the call, and every doubt (a reset, a trimmed or
// lost feed, a lost shard, a meta gone) answered by Redis or by the coded error, never "absent".
import { expect, test, vi } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, commandsOf, errorOf, namesOf, uniqueName } from './support/clients.js'
import { keyRange, SMALL_FED } from './support/feeds.js'

const { redis, deployments: CLIENTS } = bothDeployments()

/** Polls `check` until it holds (a follower's or a reload's effect), for at most `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

test.each(CLIENTS)('a replica answers as the server does: keys added elsewhere just before a strict check read present, others absent (%s)', async (_, client) => {
  const name = uniqueName('replica')
  const writer = await RedisBloomFilter.fromParameters(client, name, SMALL_FED, { feed: true })
  await writer.addMany(keyRange('before', 0, 500))
  const replica = await RedisBloomFilter.open(client, name, { kind: 'fixed', replica: true })
  expect(replica.replica).toMatchObject({ readyShards: 4, shards: 4, bytes: SMALL_FED.bits / 8 })
  expect((await replica.hasMany(keyRange('before', 0, 500))).every(Boolean)).toBe(true)
  // Added by another instance, acknowledged, then checked at once: the barrier reads them, whatever the follower did.
  for (let round = 0; round < 20; round++) {
    const keys = keyRange(`round${round}`, 0, 50)
    await writer.addMany(keys)
    expect((await replica.hasMany(keys)).every(Boolean), `round ${round}`).toBe(true)
    await writer.add(`single${round}`)
    expect(await replica.has(`single${round}`)).toBe(true)
  }
  // Keys never added: answered as the server answers them (false, or the same false positives).
  const absent = keyRange('never', 0, 2000)
  expect(await replica.hasMany(absent)).toEqual(await writer.hasMany(absent))
  await replica.close()
  await writer.destroy()
})

test('a present key costs no command; an absent one one catch-up script, shared by concurrent calls (standalone)', async () => {
  const name = uniqueName('replica-commands')
  const writer = await RedisBloomFilter.fromParameters(redis, name, SMALL_FED, { feed: true })
  await writer.addMany(keyRange('k', 0, 300))
  const replica = await RedisBloomFilter.open(redis, name, { kind: 'fixed', replica: true })
  expect(await commandsOf(redis, () => Promise.all(keyRange('k', 0, 300).map((key) => replica.has(key))))).toEqual([])
  const absent = keyRange('none', 0, 300).filter((_, i) => i % 3 === 0)
  const answers = await writer.hasMany(absent)
  const commands = await commandsOf(redis, () => Promise.all(absent.map((key) => replica.has(key))))
  expect(commands.filter((command) => command === 'evalsha' || command === 'eval')).toHaveLength(1)
  expect(await Promise.all(absent.map((key) => replica.has(key)))).toEqual(answers)
  await replica.close()
  await writer.destroy()
})

test.each(CLIENTS)('after a clear, a rebuild and an import elsewhere, keys added since read present, and the old bits go (%s)', async (_, client) => {
  const name = uniqueName('replica-reset')
  const writer = await RedisBloomFilter.fromParameters(client, name, SMALL_FED, { feed: true })
  await writer.addMany(keyRange('old', 0, 400))
  const replica = await RedisBloomFilter.open(client, name, { kind: 'fixed', replica: true })
  const loads = replica.replica!.loads
  await writer.clear()
  await writer.addMany(keyRange('new', 0, 200))
  expect((await replica.hasMany(keyRange('new', 0, 200))).every(Boolean)).toBe(true)
  await eventually(async () => replica.replica!.loads >= loads + 4 && replica.replica!.readyShards === 4)
  const old = await replica.hasMany(keyRange('old', 0, 400))
  expect(old).toEqual(await writer.hasMany(keyRange('old', 0, 400)))
  expect(old.filter(Boolean).length).toBeLessThan(40)

  await writer.rebuild(keyRange('kept', 0, 100))
  await writer.add('after-rebuild')
  expect(await replica.has('after-rebuild')).toBe(true)
  expect((await replica.hasMany(keyRange('kept', 0, 100))).every(Boolean)).toBe(true)

  const other = await RedisBloomFilter.fromParameters(client, uniqueName('replica-source'), SMALL_FED)
  await other.addMany(keyRange('imported', 0, 100))
  await RedisBloomFilter.import(client, name, await other.export(), { kind: 'fixed' })
  await writer.add('after-import')
  expect(await replica.has('after-import')).toBe(true)
  expect((await replica.hasMany(keyRange('imported', 0, 100))).every(Boolean)).toBe(true)
  await Promise.all([replica.close(), other.destroy()])
  await writer.destroy()
})

test.each(CLIENTS)('a feed trimmed past the replica (feedLength 1) makes it load the shard again, and no add is missed (%s)', async (_, client) => {
  const name = uniqueName('replica-trim')
  const writer = await RedisBloomFilter.fromParameters(client, name, { ...SMALL_FED, shards: 1, bits: 64 * 512 }, { feed: true, feedLength: 1, keysPerCommand: 8 })
  const replica = await RedisBloomFilter.open(client, name, { kind: 'fixed', replica: true })
  for (let round = 0; round < 10; round++) {
    // 80 keys in 10 entries each time: far more than the feed keeps.
    const keys = keyRange(`r${round}`, 0, 80)
    await writer.addMany(keys)
    expect((await replica.hasMany(keys)).every(Boolean), `round ${round}`).toBe(true)
  }
  expect(replica.replica!.loads).toBeGreaterThan(1)
  await replica.close()
  await writer.destroy()
})

test.each(CLIENTS)('a lost shard or meta is BLOOM_DATA_LOST for an absent key, never "absent"; a lost feed sends calls to Redis (%s)', async (_, client) => {
  const name = uniqueName('replica-lost')
  const writer = await RedisBloomFilter.fromParameters(client, name, SMALL_FED, { feed: true })
  await writer.addMany(keyRange('k', 0, 200))
  const replica = await RedisBloomFilter.open(client, name, { kind: 'fixed', replica: true })
  const names = namesOf(writer)
  const absent = keyRange('none', 0, 50)
  // The feed of shard 0 gone: its calls go to Redis (which still answers) until a reset.
  await client.del(names.feed(0))
  expect(await replica.hasMany(absent)).toEqual(await writer.hasMany(absent))
  await eventually(() => replica.replica!.readyShards === 3)
  await writer.add('while-no-feed')
  expect(await replica.has('while-no-feed')).toBe(true)
  // Shard 1's key gone: present keys still answer from the bits, an absent one is DATA_LOST.
  await client.del(names.shard(1))
  const results = await Promise.allSettled(keyRange('none', 0, 400).map((key) => replica.has(key)))
  const codes = new Set(results.filter((result) => result.status === 'rejected').map((result) => (result as PromiseRejectedResult).reason.code))
  expect([...codes]).toEqual(['BLOOM_DATA_LOST'])
  // The meta gone: every absent answer is DATA_LOST.
  await client.del(names.meta)
  expect((await errorOf(replica.has('surely-not-there'))).code).toBe('BLOOM_DATA_LOST')
  await replica.close()
  await RedisBloomFilter.destroy(client, name).catch(() => false)
  for (let s = 0; s < 4; s++) await client.del(names.shard(s), names.feed(s))
})

test('a filter without a feed, a counting filter and a filter over maxBytes are refused, each naming the way out', async () => {
  const plain = await RedisBloomFilter.fromParameters(redis, uniqueName('replica-plain'), SMALL_FED)
  const refused = await errorOf(RedisBloomFilter.open(redis, plain.name, { replica: true }))
  expect(refused.code).toBe('BLOOM_INCOMPATIBLE')
  expect(refused.message).toMatch(/feed: true/)
  const counting = await RedisBloomFilter.create(redis, uniqueName('replica-counting'), { capacity: 1000, errorRate: 0.01, counting: true })
  expect((await errorOf(RedisBloomFilter.open(redis, counting.name, { replica: true }))).message).toMatch(/^replica: a counting filter/)
  expect((await errorOf(RedisBloomFilter.create(redis, uniqueName('c'), { capacity: 1000, errorRate: 0.01, counting: true, replica: true }))).code).toBe('BLOOM_INVALID_PARAMETER')
  const fed = await RedisBloomFilter.fromParameters(redis, uniqueName('replica-big'), SMALL_FED, { feed: true })
  const over = await errorOf(RedisBloomFilter.open(redis, fed.name, { replica: { maxBytes: SMALL_FED.bits / 8 - 1 } }))
  expect(over.code).toBe('BLOOM_INVALID_PARAMETER')
  expect(over.message).toMatch(/^replica\.maxBytes/)
  for (const bad of [{ maxBytes: 0 }, { maxStaleness: -1 }, { stale: 5 }, 'yes']) {
    expect((await errorOf(RedisBloomFilter.open(redis, fed.name, { replica: bad as never }))).code).toBe('BLOOM_INVALID_PARAMETER')
  }
  expect((await errorOf(RedisBloomFilter.create(redis, uniqueName('f'), { capacity: 1000, errorRate: 0.01, feed: false, replica: true }))).code).toBe('BLOOM_INVALID_PARAMETER')
  await Promise.all([plain.destroy(), counting.destroy(), fed.destroy()])
})

test('create with replica makes a filter with a feed and answers through a replica; close stops its follower connection', async () => {
  const name = uniqueName('replica-create')
  const duplicate = vi.spyOn(redis, 'duplicate')
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 10_000, errorRate: 0.01, replica: true })
  expect((await filter.info()).feedLength).toBe(1024)
  expect(await filter.add('a')).toBe(true)
  expect(await filter.has('a')).toBe(true)
  expect(await filter.has('b')).toBe(false)
  await eventually(() => duplicate.mock.results.some((result) => (result.value as { status?: string }).status === 'ready'))
  const followers = duplicate.mock.results.map((result) => result.value as { status: string })
  duplicate.mockRestore()
  await filter.close()
  await eventually(() => followers.every((connection) => connection.status === 'end'))
  expect((await errorOf(filter.has('a'))).code).toBe('BLOOM_CLOSED')
  await RedisBloomFilter.destroy(redis, name)
})

test('an entry ID handed out again (a feed made anew, its clock behind) is told apart by its tag: the replica loads again rather than miss an add', async () => {
  const name = uniqueName('replica-tag')
  const writer = await RedisBloomFilter.fromParameters(redis, name, { ...SMALL_FED, shards: 1, bits: 64 * 512 }, { feed: true })
  await writer.addMany(keyRange('k', 0, 50))
  const replica = await RedisBloomFilter.open(redis, name, { kind: 'fixed', replica: true })
  const feed = namesOf(writer).feed(0)
  const [[position]] = (await redis.xrevrange(feed, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>
  // The feed is lost; an add meanwhile sets its bits and (NOMKSTREAM) appends nothing; then a feed
  // made again holds an entry under the replica's position ID, with another tag.
  await redis.del(feed)
  const missed = keyRange('missed', 0, 40)
  await writer.addMany(missed)
  await redis.xadd(feed, '0-1', 'r', Buffer.alloc(8, 1))
  await redis.xadd(feed, position, 'h', Buffer.concat([Buffer.alloc(8, 2), Buffer.alloc(8)]))
  expect((await replica.hasMany(missed)).every(Boolean)).toBe(true)
  await replica.close()
  await writer.destroy()
})
