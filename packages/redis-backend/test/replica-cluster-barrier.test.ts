// A replica's barrier on a Cluster (docs/SPEC.md 9.13, "Catch-up"): one script per node for the
// shards that node serves, not one per shard; and when a node refuses that script (the client's
// slot map was stale), the shards are read one script each and the answers stay the server's.
import { afterAll, expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import type { FilterParameters } from '@bloomkit/core'
import { clusterClient, commandsOf, namesOf, uniqueName } from './support/clients.js'

const cluster = clusterClient()
afterAll(async () => {
  await cluster.quit()
})

/** 12 shards (over the 3 masters) of 64 blocks (blocked layout, k = 7). */
const TWELVE: FilterParameters = { bits: 12 * 64 * 512, hashes: 7, shards: 12, seed: 9, scheme: 2, layout: 'blocked' }

const range = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}:${from + i}`)

/** The client's slot map (ioredis: per slot, the master's "host:port" first). */
const slotMap = () => (cluster as unknown as { slots: string[][] }).slots

test('a strict barrier over every shard of a 12-shard filter on 3 masters sends a script per master, not per shard, and answers as the server', async () => {
  const name = uniqueName('replica-node-barrier')
  const writer = await RedisBloomFilter.fromParameters(cluster, name, TWELVE, { feed: true })
  await writer.addMany(range('in', 0, 600))
  const replica = await RedisBloomFilter.open(cluster, name, { kind: 'fixed', replica: true })
  await writer.addMany(range('late', 0, 300))
  let answers: boolean[] = []
  const sent = await commandsOf(cluster, async () => {
    answers = await replica.hasMany([...range('late', 0, 300), ...range('out', 0, 300)])
  })
  expect(answers.slice(0, 300).every(Boolean)).toBe(true)
  const server = await writer.hasMany(range('out', 0, 300))
  expect(answers.slice(300)).toEqual(server)
  const masters = new Set(Array.from({ length: TWELVE.shards }, (_, s) => slotMap()[namesOf(writer).slot(s)][0])).size
  expect(masters).toBe(3)
  // This barrier, and at most one the follower had in flight: one script per master each (one per shard: 12 or more).
  const scripts = sent.filter((command) => command === 'evalsha').length
  expect(scripts).toBeGreaterThanOrEqual(masters)
  expect(scripts).toBeLessThanOrEqual(2 * masters)
  await replica.close()
  await writer.destroy()
})

test('with a stale slot map (every shard put on one master), a barrier whose node script is refused reads shard by shard and answers as the server', async () => {
  const name = uniqueName('replica-stale-map')
  const writer = await RedisBloomFilter.fromParameters(cluster, name, TWELVE, { feed: true })
  await writer.addMany(range('in', 0, 600))
  const replica = await RedisBloomFilter.open(cluster, name, { kind: 'fixed', replica: true })
  await writer.addMany(range('late', 0, 300))
  const names = namesOf(writer)
  const slots = slotMap()
  const wrong = slots[names.slot(0)]
  const saved = Array.from({ length: TWELVE.shards }, (_, s) => slots[names.slot(s)])
  for (let s = 0; s < TWELVE.shards; s++) slots[names.slot(s)] = wrong
  try {
    const answers = await replica.hasMany([...range('late', 0, 300), ...range('in', 0, 600), ...range('out', 0, 300)])
    expect(answers.slice(0, 900).every(Boolean)).toBe(true)
    expect(answers.slice(900)).toEqual(await writer.hasMany(range('out', 0, 300)))
    expect(replica.replica).toMatchObject({ readyShards: TWELVE.shards })
  } finally {
    for (let s = 0; s < TWELVE.shards; s++) slots[names.slot(s)] = saved[s]
  }
  await replica.close()
  await writer.destroy()
})
