// The feed of a filter with store format 2 (docs/SPEC.md 9.12): every add that sets bits in a live
// shard appends its keys in the same atomic step, whatever path it takes, so that replaying the
// feeds into empty shards gives exactly the server's bits; every replacement resets the feed.
import { expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, namesOf, PATHS, uniqueName } from './support/clients.js'
import { allFeeds, bitsOnlyIn, keyRange, replay, serverBits, SMALL_FED } from './support/feeds.js'
import type { RedisClient } from '../src/wire/client.js'

const { deployments: CLIENTS } = bothDeployments()

/** Adds `keys` through `filter` every way a caller can: one batch, single calls at once (coalesced), single calls one by one. */
async function addEveryWay(filter: RedisBloomFilter, keys: string[]): Promise<void> {
  const third = Math.floor(keys.length / 3)
  await filter.addMany(keys.slice(0, third))
  await Promise.all(keys.slice(third, 2 * third).map((key) => filter.add(key)))
  for (const key of keys.slice(2 * third, 2 * third + 20)) await filter.add(key)
  await filter.addMany(keys.slice(2 * third + 20))
}

/** Expects the feeds of `filter` replayed (onto `base`, the bits at their resets) to be exactly the server's bits. */
async function expectFeedsMatch(client: RedisClient, filter: RedisBloomFilter, base?: Uint8Array): Promise<void> {
  const names = namesOf(filter)
  const [feeds, server] = await Promise.all([allFeeds(client, names, filter.parameters.shards), serverBits(client, names, filter.parameters)])
  for (const entries of feeds) expect(entries[0]?.kind, 'each feed starts with its reset entry').toBe('reset')
  const replayed = replay(filter.parameters, feeds, base)
  expect(bitsOnlyIn(server, replayed), 'bits the server has and the feeds do not').toEqual([])
  expect(bitsOnlyIn(replayed, server), 'bits the feeds have and the server does not').toEqual([])
}

test.each(CLIENTS)('every add path appends its keys to the shard feed in the same step: the replayed feeds are the server bits, also around a rebuild (%s)', async (_, client) => {
  const name = uniqueName('feed-paths')
  const filter = await RedisBloomFilter.fromParameters(client, name, SMALL_FED, { feed: true })
  const ways = await Promise.all(PATHS.map(([, options]) => RedisBloomFilter.open(client, name, { ...options, kind: 'fixed' })))
  // Every path of a single process, then two at once.
  for (const [i, way] of ways.entries()) await addEveryWay(way, keyRange(`path${i}`, 0, 150))
  await Promise.all(ways.map((way, i) => addEveryWay(way, keyRange(`both${i}`, 0, 90))))
  await expectFeedsMatch(client, filter)

  // Half full, batches of mostly present keys: adds read blocks first and (standalone, batch
  // connections) send only the bits still missing.
  await ways[4].addMany(keyRange('fill', 0, 6000))
  const partial = ways[0]
  for (let round = 0; round < 4; round++) await partial.addMany([...keyRange('fill', round * 500, round * 500 + 600), ...keyRange(`new${round}`, 0, 400)])
  await expectFeedsMatch(client, filter)

  // During a rebuild every add is written to the live shards (fed) and the next generation.
  let release!: () => void
  let pulled!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const started = new Promise<void>((resolve) => (pulled = resolve))
  async function* source() {
    pulled()
    await gate
    yield* keyRange('kept', 0, 500)
  }
  const rebuilt = filter.rebuild(source())
  await started
  for (const [i, way] of ways.entries()) await addEveryWay(way, keyRange(`during${i}`, 0, 120))
  await expectFeedsMatch(client, filter)
  release()
  await rebuilt

  // The swap reset every feed: it holds one reset entry, and the bits are the rebuilt ones.
  const names = namesOf(filter)
  for (const entries of await allFeeds(client, names, SMALL_FED.shards)) expect(entries.map((entry) => entry.kind)).toEqual(['reset'])
  const loaded = await serverBits(client, names, SMALL_FED)
  for (const [i, way] of ways.entries()) await addEveryWay(way, keyRange(`after${i}`, 0, 120))
  await expectFeedsMatch(client, filter, loaded)
  expect(await filter.hasMany([...keyRange('kept', 0, 500), ...keyRange('during3', 0, 120), ...keyRange('after2', 0, 120)])).not.toContain(false)
  await filter.destroy()
  await Promise.all(ways.map((way) => way.close()))
})
