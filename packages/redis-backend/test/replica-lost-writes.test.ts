// Issue 35 items 3 and 8: Redis that comes back without its last writes (restarted from an older
// snapshot, or a replica promoted before those writes reached it) keeps the entry a replica stands
// on while losing entries after it. A key the replica added itself in that gap shows set in its
// bits, yet is gone from the server: adding it again must write it again, and only the feed's
// entries (never the replica's own writes) may move what the replica's position vouches for.
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, expect, test } from 'vitest'
import type { FilterParameters } from '@bloomkit/core'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { startRedisServer, type RedisServerHandle } from '../../../test-support/redis-servers.js'
import { fastFail, uniqueName } from './support/clients.js'

const SMALL: FilterParameters = { bits: 2 * 64 * 512, hashes: 7, shards: 2, seed: 9, scheme: 2, layout: 'blocked' }
const range = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}:${from + i}`)

let server: RedisServerHandle | undefined
afterAll(async () => {
  await server?.stop()
})

/** Stops the replica's follower, so that nothing but the test's own calls moves its position. */
function stopFollower(filter: RedisBloomFilter): void {
  ;(filter as unknown as { replicaOf: { follower: { stop(): void } } }).replicaOf.follower.stop()
}

test('keys a replica added just before Redis lost its last writes are written again when added again (standalone)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bloomkit-lost-writes-'))
  server = await startRedisServer({ dir })
  const { port } = server
  const client = new Redis({ host: '127.0.0.1', port, ...fastFail }).on('error', () => {})
  const name = uniqueName('replica-lost-writes')
  const direct = await RedisBloomFilter.fromParameters(client, name, SMALL, { feed: true })
  const replica = await RedisBloomFilter.open(client, name, { kind: 'fixed', replica: true })
  stopFollower(replica)
  await direct.addMany(range('kept', 0, 300))
  // A strict check: a barrier moves the replica's position onto the entries of these adds.
  expect((await replica.hasMany(range('kept', 0, 300))).every(Boolean)).toBe(true)
  await client.save()
  // Added through the replica after the snapshot: lost when Redis comes back from it.
  const lost = range('lost', 0, 200)
  expect((await replica.addMany(lost)).every(Boolean)).toBe(true)
  await server.kill()
  server = await startRedisServer({ port, dir })
  expect((await direct.hasMany(lost)).some(Boolean), 'the writes after the snapshot are gone').toBe(false)
  // Added again (acknowledged now): every key must reach the server, and say new.
  expect((await replica.addMany(lost.slice(0, 100))).every(Boolean)).toBe(true)
  expect((await Promise.all(lost.slice(100).map((key) => replica.add(key)))).every(Boolean)).toBe(true)
  expect((await direct.hasMany(lost)).every(Boolean), 'every key acknowledged after the restart reads present').toBe(true)
  await replica.close()
  await direct.destroy()
  client.disconnect()
})
