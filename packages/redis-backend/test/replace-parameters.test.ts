import { expect, test } from 'vitest'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { RedisBloomFilter, type RedisClient } from '@bloomkit/redis-backend'
import type { Cluster, Redis } from 'ioredis'
import { KeyNames } from '../src/layout/key-names.js'
import { bothDeployments, commandsOnKey, errorOf, uniqueName } from './support/clients.js'

// RedisBloomFilter.import with replaceParameters: a filter replaced by one with other parameters
// (size, shards, seed), staged while the old one answers, switched in one step (docs/SPEC.md 9.6).

const { redis, cluster } = bothDeployments()

const range = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}:${i}`)

/** Every Redis key of filter `name` (on every master of a Cluster). */
async function keysOf(client: Redis | Cluster, name: string): Promise<string[]> {
  const nodes = 'nodes' in client && typeof client.nodes === 'function' && (client as Cluster).isCluster ? (client as Cluster).nodes('master') : [client as Redis]
  const keys = await Promise.all(nodes.map((node) => node.keys(`${name}:*`)))
  return keys.flat().sort()
}

/** The keys a filter of these parameters holds in Redis: its meta and its live shards. */
function expectedKeys(name: string, shards: number): string[] {
  const names = new KeyNames(name, shards)
  return [names.meta, ...Array.from({ length: shards }, (_, shard) => names.shard(shard))].sort()
}

/** A snapshot of a memory filter holding `keys`. */
async function snapshotOf(options: { capacity: number; errorRate: number; shards?: number; seed?: number }, keys: string[]): Promise<Uint8Array> {
  const filter = await MemoryBloomFilter.create(options)
  filter.addMany(keys)
  return filter.export()
}

/** Yields the snapshot in 1 KiB chunks, stopping at half until `release` is called (then fails if told so). */
function paused(snapshot: Uint8Array) {
  let release!: (fail: boolean) => void
  const gate = new Promise<boolean>((resolve) => (release = resolve))
  let reachedHalf!: () => void
  const half = new Promise<void>((resolve) => (reachedHalf = resolve))
  async function* chunks() {
    for (let at = 0; at < snapshot.length; at += 1024) {
      if (at >= snapshot.length / 2 && at - 1024 < snapshot.length / 2) {
        reachedHalf()
        if (await gate) throw new Error('the source failed')
      }
      yield snapshot.subarray(at, at + 1024)
    }
  }
  return { chunks: chunks(), half, release }
}

test.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('an import with other size, shards and seed replaces the filter whole; instances of the old one fail rather than answer (%s)', async (_, client) => {
  const name = uniqueName('replace')
  const old = await RedisBloomFilter.create(client, name, { capacity: 2000, errorRate: 0.01, shards: 2 })
  await old.addMany(range('old', 1000))
  const generation = (await old.info()).generation
  const kept = range('new', 5000)
  const snapshot = await snapshotOf({ capacity: 20_000, errorRate: 0.001, shards: 5 }, kept)

  await expect(RedisBloomFilter.import(client as RedisClient, name, snapshot)).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
  const replaced = await RedisBloomFilter.import(client, name, snapshot, { replaceParameters: true, kind: 'fixed' })
  const reopened = await RedisBloomFilter.open(client, name, { kind: 'fixed' })
  expect(reopened.parameters).toEqual(replaced.parameters)
  expect(reopened.parameters.shards).toBe(5)
  expect(reopened.parameters.seed).not.toBe(old.parameters.seed)
  expect(new Set(await reopened.hasMany(kept))).toEqual(new Set([true]))
  expect(new Uint8Array(await reopened.export())).toEqual(new Uint8Array(snapshot))
  const info = await reopened.info()
  expect(info.state).toBe('ready')
  expect(info.generation).toBe(generation + 1)
  expect(reopened.epoch).not.toBe(old.epoch)
  // The old instance answers nothing from keys that are not its own any more.
  expect((await errorOf(old.hasMany(range('old', 100)))).code).toBe('BLOOM_DATA_LOST')
  // Only the new filter's keys remain: no staged key, no old shard, no meta field of the run.
  expect(await keysOf(client, name)).toEqual(expectedKeys(name, 5))
  expect(await (client as Redis).hmget(`${name}:meta`, 'staged', 'retired')).toEqual([null, null])
  await reopened.destroy()
  await Promise.all([old.close(), replaced.close()])
})

test('while the new filter is staged the old one answers as before; a failed import leaves it whole, unlocked, and nothing else behind', async () => {
  const name = uniqueName('replace-fail')
  const old = await RedisBloomFilter.create(redis, name, { capacity: 5000, errorRate: 0.01, shards: 1 })
  const oldKeys = range('old', 3000)
  await old.addMany(oldKeys)
  const before = new Uint8Array(await old.export())
  const source = paused(await snapshotOf({ capacity: 50_000, errorRate: 0.01, shards: 3 }, range('new', 100)))
  const importing = RedisBloomFilter.import(redis, name, source.chunks, { replaceParameters: true, kind: 'fixed' })
  await source.half
  // Staged: another process opens the old filter, and it holds every old key.
  const reader = await RedisBloomFilter.open(redis, name, { lockWait: 0, kind: 'fixed' })
  expect(reader.parameters).toEqual(old.parameters)
  expect(new Set(await reader.hasMany(oldKeys))).toEqual(new Set([true]))
  expect((await reader.info()).state).toBe('replacing')
  expect(Number(await redis.hget(`${name}:meta`, 'staged'))).toBe(3)
  source.release(true)
  await expect(importing).rejects.toThrow('the source failed')
  expect(new Set(await old.hasMany(oldKeys))).toEqual(new Set([true]))
  expect(new Uint8Array(await old.export())).toEqual(before)
  expect((await old.info()).state).toBe('ready')
  expect(await keysOf(redis, name)).toEqual(expectedKeys(name, 1))
  expect(await redis.hget(`${name}:meta`, 'staged')).toBeNull()
  await old.destroy()
  await reader.close()
})

test('a stuck replacement (its process gone) is refused without force, taken over with it, and cleared by destroy', async () => {
  const name = uniqueName('replace-stuck')
  const old = await RedisBloomFilter.create(redis, name, { capacity: 5000, errorRate: 0.01, shards: 1 })
  await old.addMany(range('old', 500))
  // A replacement that never finishes, as if its process had been killed while staging 4 shards.
  const stuck = paused(await snapshotOf({ capacity: 80_000, errorRate: 0.01, shards: 4 }, range('stuck', 100)))
  const stuckImport = RedisBloomFilter.import(redis, name, stuck.chunks, { replaceParameters: true, kind: 'fixed' }).catch((error: unknown) => error)
  await stuck.half
  const staged = new KeyNames(name, 4)
  expect(await redis.exists(staged.nextShard(1))).toBe(1)

  const snapshot = await snapshotOf({ capacity: 20_000, errorRate: 0.01, shards: 2 }, range('new', 1000))
  expect((await errorOf(RedisBloomFilter.import(redis, name, snapshot, { replaceParameters: true, kind: 'fixed' }))).code).toBe('BLOOM_LOCKED')
  const taken = await RedisBloomFilter.import(redis, name, snapshot, { replaceParameters: true, force: true, kind: 'fixed' })
  expect(taken.parameters.shards).toBe(2)
  expect(new Set(await taken.hasMany(range('new', 1000)))).toEqual(new Set([true]))
  // The stuck run's staged keys went with the forced run.
  expect(await keysOf(redis, name)).toEqual(expectedKeys(name, 2))

  // Stuck again, then destroyed: destroy removes the staged keys too.
  const again = paused(await snapshotOf({ capacity: 80_000, errorRate: 0.01, shards: 4 }, range('again', 100)))
  const againImport = RedisBloomFilter.import(redis, name, again.chunks, { replaceParameters: true, kind: 'fixed' }).catch((error: unknown) => error)
  await again.half
  expect(await redis.exists(staged.nextShard(1))).toBe(1)
  expect(await RedisBloomFilter.destroy(redis, name)).toBe(true)
  expect(await keysOf(redis, name)).toEqual([])
  stuck.release(true)
  again.release(true)
  await Promise.all([stuckImport, againImport])
  expect(await keysOf(redis, name)).toEqual([])
  await Promise.all([old.close(), taken.close()])
})

test('a forced rebuild also clears what a stuck replacement staged', async () => {
  const name = uniqueName('replace-rebuild')
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 5000, errorRate: 0.01, shards: 1 })
  const stuck = paused(await snapshotOf({ capacity: 80_000, errorRate: 0.01, shards: 3 }, range('stuck', 100)))
  const stuckImport = RedisBloomFilter.import(redis, name, stuck.chunks, { replaceParameters: true, kind: 'fixed' }).catch((error: unknown) => error)
  await stuck.half
  await filter.rebuild(range('k', 100), { force: true })
  expect(await keysOf(redis, name)).toEqual(expectedKeys(name, 1))
  expect(new Set(await filter.hasMany(range('k', 100)))).toEqual(new Set([true]))
  stuck.release(true)
  await stuckImport
  await filter.destroy()
})

test('an import that replaces the parameters reads the meta once, in the script that tried to create it: no HGETALL of its own (issue 34 item 2)', async () => {
  const name = uniqueName('replace-reads')
  const old = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, seed: 5 })
  await old.addMany(range('old', 50))
  const snapshot = await snapshotOf({ capacity: 5000, errorRate: 0.01, shards: 2, seed: 5 }, range('new', 50))
  let replaced: { close(): Promise<void> } | undefined
  const sent = await commandsOnKey(redis, `${name}:meta`, async () => (replaced = await RedisBloomFilter.import(redis, name, snapshot, { replaceParameters: true, kind: 'fixed' })))
  expect(sent.filter((command) => command === 'hgetall' || command === 'hget')).toEqual([])
  const reopened = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
  expect(reopened.parameters.shards).toBe(2)
  expect(await reopened.hasMany(range('new', 50))).toEqual(range('new', 50).map(() => true))
  await Promise.all([replaced?.close(), old.close()])
  await reopened.destroy()
})
