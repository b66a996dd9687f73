// Adds that send only the bits their block read found missing (batch connections, standalone,
// blocked layout): the answers and the stored bits must be exactly those of adds that send all k
// bits, whatever the keys share, and a key must never lose a bit to a rebuild or a racing writer.
import { afterAll, beforeAll, expect, test } from 'vitest'
import { Redis } from 'ioredis'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { watchCommands } from '../../../test-support/redis-monitor.js'
import { startRedisServer, type RedisServerHandle } from '../../../test-support/redis-servers.js'
import { commandsOf, fastFail, namesOf, uniqueName } from './support/clients.js'

// MONITOR sees every client of its server, and ioredis fails a monitor connection that meets other
// files' traffic as it starts ("Command queue state error"): this file runs on a server of its own.
let server: RedisServerHandle
let redis: Redis
let other: Redis
const client = () => new Redis({ host: server.host, port: server.port, ...fastFail })
beforeAll(async () => {
  server = await startRedisServer()
  redis = client()
  other = client()
})
afterAll(async () => {
  await Promise.all([redis.quit(), other.quit()])
  await server.stop()
})

const range = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}:${from + i}`)

/** Small filters, so that keys share blocks and bits: 64 blocks of 512 bits, k = 7, one shard. */
const SMALL = { bits: 64 * 512, hashes: 7, shards: 1, seed: 11, layout: 'blocked' as const }

/** What MONITOR saw while `body` ran: MULTI commands, on any key. */
const seenMulti = { count: 0 }

/** Counts the `SET u1` operations of the BITFIELDs on `key` that `body` makes Redis run (MONITOR sees the batch connections too); MULTIs go to {@link seenMulti}. */
async function setOpsOn(key: string, body: () => Promise<unknown>): Promise<number> {
  seenMulti.count = 0
  let ops = 0
  await watchCommands(client, redis, body, (args) => {
    if (args[0]?.toLowerCase() === 'bitfield' && args[1] === key) for (let i = 2; i < args.length; i++) ops += args[i].toLowerCase() === 'set' ? 1 : 0
    if (args[0]?.toLowerCase() === 'multi') seenMulti.count++
  })
  return ops
}

test('answers and bits are exactly those of BITFIELD batches: keys sharing bits, partly set blocks, a key twice in a batch; only missing bits are sent', async () => {
  const reference = await RedisBloomFilter.fromParameters(redis, uniqueName('all-bits'), SMALL, { scanBytesPerKey: 0, blockReads: false })
  const partial = await RedisBloomFilter.fromParameters(redis, uniqueName('missing-bits'), SMALL, { scanBytesPerKey: 0 })
  // Half the bits set (k·n/m = ln 2), so that most new keys find some of theirs set already.
  const fill = range('fill', 0, 3000)
  expect(await partial.addMany(fill)).toEqual(await reference.addMany(fill))
  let sent = 0
  let written = 0
  // Batches of new keys, each with a fifth of its keys twice (and some from the fill again).
  for (let round = 0; round < 5; round++) {
    const fresh = range(`new${round}`, 0, 800)
    const batch = [...fresh, ...fresh.slice(0, 160), ...fill.slice(round * 40, round * 40 + 40)]
    const expected = await reference.addMany(batch)
    let answers: boolean[] = []
    sent += await setOpsOn(namesOf(partial).shard(0), async () => (answers = await partial.addMany(batch)))
    expect(answers).toEqual(expected)
    // The blocks were read without MULTI/EXEC: the meta's guard before and after stands in for it.
    if (round > 0) expect(seenMulti.count).toBe(0)
    written += expected.filter(Boolean).length
    expect(answers.slice(800, 960).some(Boolean)).toBe(false)
  }
  // The same bits, byte for byte (the snapshot's 40-byte header aside).
  expect(new Uint8Array(await partial.export()).subarray(40)).toEqual(new Uint8Array(await reference.export()).subarray(40))
  // Far fewer than k operations per new key: only the bits missing at the read were sent.
  expect(sent).toBeGreaterThan(written)
  expect(sent).toBeLessThan(0.8 * SMALL.hashes * written)
  await Promise.all([reference.destroy(), partial.destroy()])
})

test('a filter locked (rebuild, import, clear) or a generation counted between read and write: every bit is written again, answers stay exact', async () => {
  const reference = await RedisBloomFilter.fromParameters(redis, uniqueName('all-bits'), SMALL, { scanBytesPerKey: 0, blockReads: false })
  const partial = await RedisBloomFilter.fromParameters(redis, uniqueName('guarded'), SMALL, { scanBytesPerKey: 0 })
  const meta = namesOf(partial).meta
  const shard = namesOf(partial).shard(0)
  const fill = range('fill', 0, 3000)
  await Promise.all([reference.addMany(fill), partial.addMany(fill)])
  // A batch that meets half its bits set makes the next ones read first (the fill, into an empty filter, did not).
  const warm = range('warm', 0, 300)
  expect(await partial.addMany(warm)).toEqual(await reference.addMany(warm))
  // Locked before the batch: its writes send all k bits of each key not yet present, and, since
  // the blocks were read without MULTI/EXEC (a rebuild may have flagged the marker after its read),
  // all k bits of each key found present too; the answers stay those of a plain add.
  await redis.hset(meta, 'state', 'rebuilding')
  const locked = [...range('locked', 0, 500), ...fill.slice(0, 200)]
  const present = (await reference.hasMany(locked)).filter(Boolean).length
  expect(present).toBeGreaterThanOrEqual(200)
  const expected = await reference.addMany(locked)
  let answers: boolean[] = []
  const ops = await setOpsOn(shard, async () => (answers = await partial.addMany(locked)))
  expect(answers).toEqual(expected)
  expect(ops).toBe(SMALL.hashes * locked.length)
  await redis.hset(meta, 'state', 'ready')
  // The generation moving on while batches run (as a rebuild's unlock does): the keys written
  // partly are written again through the client, and a key is still new exactly once.
  let moving = true
  const mover = (async () => {
    while (moving) {
      await other.hincrby(meta, 'generation', 1)
      await new Promise((resolve) => setImmediate(resolve))
    }
  })()
  let rewrites = 0
  try {
    for (let round = 0; round < 6; round++) {
      const batch = range(`moving${round}`, 0, 400)
      const expectedMoving = await reference.addMany(batch)
      const commands = await commandsOf(redis, async () => expect(await partial.addMany(batch)).toEqual(expectedMoving))
      rewrites += commands.filter((name) => name === 'bitfield').length
    }
  } finally {
    moving = false
    await mover
  }
  expect(rewrites).toBeGreaterThan(0)
  expect(new Uint8Array(await partial.export()).subarray(40)).toEqual(new Uint8Array(await reference.export()).subarray(40))
  await Promise.all([reference.destroy(), partial.destroy()])
})

test('racing writers on the same new keys: a key is new for at most one of them, and present after both', async () => {
  const name = uniqueName('racing')
  const setup = await RedisBloomFilter.fromParameters(redis, name, { ...SMALL, bits: 256 * 512 }, { scanBytesPerKey: 0 })
  await setup.addMany(range('fill', 0, 12_000))
  const clients = [client(), client()]
  try {
    const writers = await Promise.all(clients.map((c) => RedisBloomFilter.open(c, name, { scanBytesPerKey: 0 })))
    for (let round = 0; round < 20; round++) {
      // Each writer's batch holds the shared keys in its own order, among keys of its own.
      const shared = range(`shared${round}`, 0, 300)
      const before = await setup.hasMany(shared)
      const batches = [
        [...shared, ...range(`own0:${round}`, 0, 200)],
        [...range(`own1:${round}`, 0, 200), ...[...shared].reverse()],
      ]
      const [first, second] = await Promise.all(writers.map((writer, i) => writer.addMany(batches[i])))
      let once = 0
      for (let i = 0; i < shared.length; i++) {
        const news = Number(first[i]) + Number(second[200 + shared.length - 1 - i])
        expect(news, shared[i]).toBeLessThanOrEqual(before[i] ? 0 : 1)
        once += news
      }
      // Neither says new only where keys added before it in the same batch set all its bits.
      expect(once).toBeGreaterThan(0.9 * before.filter((found) => !found).length)
      expect((await setup.hasMany([...batches[0], ...batches[1]])).every(Boolean)).toBe(true)
    }
    await Promise.all(writers.map((writer) => writer.close()))
  } finally {
    await Promise.all(clients.map((c) => c.quit()))
    await setup.destroy()
  }
})

test('a rebuild while batches of new keys are added with only their missing bits: no key added once the source is read goes missing', async () => {
  const name = uniqueName('rebuild-partial')
  const filter = await RedisBloomFilter.fromParameters(redis, name, { ...SMALL, bits: 512 * 512, shards: 2 }, { scanBytesPerKey: 0 })
  const kept = range('kept', 0, 25_000)
  await filter.addMany(kept)
  const writer = await RedisBloomFilter.open(other, name, { scanBytesPerKey: 0 })
  let sourceStarted = false
  async function* slowly() {
    sourceStarted = true
    for (let i = 0; i < kept.length; i++) {
      if (i % 1000 === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      yield kept[i]
    }
  }
  let rebuilding = true
  const meanwhile: string[] = []
  // While the filter is locked its adds write every bit; once it is ready again, only missing ones.
  let after = 0
  const writes = (async () => {
    for (let round = 0; rebuilding || after++ < 3; round++) {
      const batch = range(`meanwhile${round}`, 0, 300)
      const counts = sourceStarted
      const answers = await writer.addMany(batch)
      if (counts) meanwhile.push(...batch)
      // Each key is new in its own batch (no false "already present" beyond the filter's error).
      expect(answers.filter(Boolean).length).toBeGreaterThan(150)
    }
  })()
  try {
    await filter.rebuild(slowly())
  } finally {
    rebuilding = false
    await writes
  }
  expect(meanwhile.length).toBeGreaterThan(0)
  const found = await filter.hasMany([...kept, ...meanwhile])
  expect(found.indexOf(false)).toBe(-1)
  await writer.close()
  await filter.destroy()
})
