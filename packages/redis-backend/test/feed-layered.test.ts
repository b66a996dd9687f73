// Layered filters with feeds (docs/SPEC.md 9.8 and 9.12): the layered meta in format 2, every layer
// a fixed filter with feeds of its feedLength, whoever creates it (a grower, a rebuild, an import),
// and every add into a layer fed: each layer's feeds replayed are its bits.
import { expect, test } from 'vitest'
import { RedisBloomFilter, type LayeredRedisFilter } from '@bloomkit/redis-backend'
import type { RedisClient } from '../src/wire/client.js'
import { bothDeployments, errorOf, namesOf, uniqueName } from './support/clients.js'
import { allFeeds, bitsOnlyIn, keyRange, replay, serverBits } from './support/feeds.js'
import * as spec from './support/independent.js'

const { redis, cluster } = bothDeployments()

/** The bits of each layer of `filter`, by id. */
async function layerBits(client: RedisClient, filter: LayeredRedisFilter): Promise<Map<number, Uint8Array>> {
  const bits = new Map<number, Uint8Array>()
  for (const { id } of spec.parseLayers(String(await client.hget(`${filter.name}:meta`, 'layers')))) {
    const layer = await RedisBloomFilter.open(client, `${filter.name}:L${id}`, { kind: 'fixed' })
    bits.set(id, await serverBits(client, namesOf(layer), layer.parameters))
    await layer.close()
  }
  return bits
}

/**
 * Every layer of `filter` has feeds of `feedLength`, and replaying them (onto `loaded`, a layer's
 * bits at its feeds' resets, for an imported one) gives its bits.
 */
async function expectLayersFed(client: RedisClient, filter: LayeredRedisFilter, feedLength: number, stage: string, loaded = new Map<number, Uint8Array>()): Promise<number> {
  const layers = spec.parseLayers(String(await client.hget(`${filter.name}:meta`, 'layers')))
  for (const { id } of layers) {
    const layer = await RedisBloomFilter.open(client, `${filter.name}:L${id}`, { kind: 'fixed' })
    expect(await client.hmget(`${layer.name}:meta`, 'format', 'feedLength'), `layer ${id}`).toEqual(['2', String(feedLength)])
    const names = namesOf(layer)
    const feeds = await allFeeds(client, names, layer.parameters.shards)
    const [server, replayed] = [await serverBits(client, names, layer.parameters), replay(layer.parameters, feeds, loaded.get(id))]
    expect(bitsOnlyIn(server, replayed), `${stage} layer ${id}: bits the feeds lack`).toEqual([])
    expect(bitsOnlyIn(replayed, server), `layer ${id}: bits the server lacks`).toEqual([])
    await layer.close()
  }
  return layers.length
}

test.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('a scalable filter with feeds: format 2, every layer fed (grown, rebuilt, imported), options checked (%s)', async (_, client) => {
  const name = uniqueName('feed-layered')
  const filter = await RedisBloomFilter.create(client, name, { capacity: 300, errorRate: 0.01, growth: 2, feed: true, feedLength: 200 })
  expect(await client.hmget(`${name}:meta`, 'format', 'feedLength')).toEqual(['2', '200'])
  await filter.addMany(keyRange('a', 0, 1500))
  for (const key of keyRange('one', 0, 50)) await filter.add(key)
  expect(await expectLayersFed(client, filter, 200, 'grown')).toBeGreaterThan(2)
  // Another instance, opened without asking, writes through feeds too.
  const other = await RedisBloomFilter.open(client, name, { kind: 'layered' })
  await other.addMany(keyRange('b', 0, 800))
  await expectLayersFed(client, filter, 200, 'other')
  await filter.rebuild(keyRange('kept', 0, 400))
  expect(await expectLayersFed(client, filter, 200, 'rebuilt')).toBe(1)

  // An import into a free name with feed: true; without, format 1 as before.
  const snapshot = await filter.export()
  const imported = await RedisBloomFilter.import(client, uniqueName('feed-layered-import'), snapshot, { kind: 'layered', feed: true })
  expect(await client.hget(`${imported.name}:meta`, 'format')).toBe('2')
  const loaded = await layerBits(client, imported)
  await imported.addMany(keyRange('c', 0, 300))
  await expectLayersFed(client, imported, 1024, 'imported', loaded)
  await client.hdel(`${imported.name}:meta`, 'feedLength')
  expect((await errorOf(RedisBloomFilter.open(client, imported.name))).code, 'format 2 without feedLength').toBe('BLOOM_CORRUPT_STORE')
  const plain = await RedisBloomFilter.import(client, uniqueName('feed-layered-plain'), snapshot, { kind: 'layered' })
  expect(await client.hget(`${plain.name}:meta`, 'format')).toBe('1')
  const refused = await errorOf(RedisBloomFilter.create(client, plain.name, { capacity: 300, errorRate: 0.01, growth: 2, seed: plain.policy.seed, feed: true }))
  expect(refused.code).toBe('BLOOM_INCOMPATIBLE')

  // A reader and writer written from the spec grows the filter in layers with feeds.
  const theirs = await spec.openLayered(client as never, name)
  expect(theirs.feedLength).toBe(200)
  await spec.addLayered(client as never, theirs, keyRange('spec', 0, 1200))
  expect(await expectLayersFed(client, filter, 200, 'spec')).toBeGreaterThan(1)
  expect(await filter.hasMany(keyRange('spec', 0, 1200))).not.toContain(false)
  await Promise.all([filter.destroy(), other.close(), imported.destroy(), plain.destroy()])
})

test('a rotating filter with feeds: each window’s layer is fed', async () => {
  const clock = { now: 1_800_000_000_000 }
  const filter = await RedisBloomFilter.create(redis, uniqueName('feed-rotating'), { capacity: 500, errorRate: 0.01, window: { seconds: 60, keep: 2 }, feed: true, clock: () => clock.now })
  for (let w = 0; w < 3; w++) {
    if (w > 0) clock.now += 60_000
    await filter.addMany(keyRange(`w${w}`, 0, 300))
  }
  expect(await expectLayersFed(redis, filter, 1024, 'rotated')).toBe(2)
  await filter.destroy()
})
