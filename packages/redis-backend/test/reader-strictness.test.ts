import { afterAll, describe, expect, test, vi } from 'vitest'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import type { Command } from 'ioredis'
import { clusterClient, errorOf, namesOf, standaloneClient, uniqueName } from './support/clients.js'
import * as spec from './support/independent.js'

// The silences of docs/SPEC.md 9 that issue 33 (item 7) found, each now a sentence of the spec and
// a rule of the library: a counting filter's flagged marker, a second live write that meets a new
// rebuild's flag, `ready:<id>` of dropped layers, a layer's count above its capacity. The meta
// fields' own strictness is in independent.test.ts ("reader strictness").

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

/** The 4 marker bytes of `value`, big-endian. */
const marker = (value: number) => Buffer.from([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255])

describe('docs/SPEC.md 9.11: a counting filter has no flagged marker', () => {
  test('shard 0 carrying the flagged marker: BLOOM_DATA_LOST on open, as on every call', async () => {
    const name = uniqueName('strict-counting-flag')
    const filter = await RedisBloomFilter.create(redis, name, { capacity: 200, errorRate: 0.01, counting: true, shards: 1 })
    await filter.addMany(keys('m', 50))
    const shardBytes = filter.parameters.bits / 2
    const key = namesOf(filter).shard(0)
    const epoch = Number(await redis.hget(`${name}:meta`, 'epoch'))
    await redis.setrange(key, shardBytes, marker(2 * epoch + 1))
    expect((await errorOf(filter.hasMany(keys('m', 50)))).code).toBe('BLOOM_DATA_LOST')
    expect((await errorOf(RedisBloomFilter.open(redis, name, { kind: 'counting' }))).code).toBe('BLOOM_DATA_LOST')
    await filter.destroy()
  })
})

describe.each([
  ['standalone', standaloneClient],
  ['Cluster', clusterClient],
] as const)('docs/SPEC.md 9.5: a second live write that reads the flagged marker again (%s)', (_, connect) => {
  test('copies the key into the next generation of the rebuild that flagged it, so the key survives that swap', async () => {
    const client = connect()
    const name = uniqueName('strict-second-write')
    const created = await RedisBloomFilter.fromParameters(client, name, { bits: 8192, hashes: 5, shards: 1, seed: 3, layout: 'classic' })
    // Per-bit BITFIELD adds over the client's own connection: the path whose copy may meet no next key.
    const filter = await RedisBloomFilter.open(client, name, { kind: 'fixed', scanBytesPerKey: 0, blockReads: false, batchConnection: false })
    const names = namesOf(filter)
    const [live, next] = [names.shard(0), names.nextShard(0)]
    const B = 8192 / 8
    // A rebuild flagged the live shard, and its next key is gone (it swapped or gave up) when the writer copies.
    await client.setrange(live, B, marker(2 * filter.epoch + 1))
    await client.del(next)
    // Right after the writer cleans up its failed copy, a new rebuild has allocated and sealed its
    // next key (the live key stays flagged): the writer's second live write meets that flag.
    let newRebuild = false
    const send = client.sendCommand.bind(client)
    const spy = vi.spyOn(client, 'sendCommand').mockImplementation((command: Command, stream?: unknown) => {
      const sent = send(command, stream as never)
      if (!newRebuild && (command.name === 'eval' || command.name === 'evalsha') && command.args.some((arg) => String(arg) === next)) {
        newRebuild = true
        // Both sent now, not one after the other's reply: queued on the slot's connection right behind
        // the script, they land before the writer's next command (sent once the script has replied).
        void client.setrange(next, B + 3, '\0')
        void client.setrange(next, B, marker(2 * filter.epoch))
      }
      return sent
    })
    expect(await filter.add('during')).toBe(true)
    spy.mockRestore()
    expect(newRebuild).toBe(true)
    // That rebuild swaps its next key in: the key added during it must be there.
    await client.rename(next, live)
    expect(await filter.has('during')).toBe(true)
    await Promise.all([filter.close(), created.destroy()])
    await client.quit()
  })
})

describe('docs/SPEC.md 9.8: the list’s own fields', () => {
  test('the growing script deletes a dropped layer’s ready:<id> with its count:<id>', async () => {
    const name = uniqueName('strict-ready')
    const clocks = { a: 1_800_000_000_000, b: 1_800_000_000_000 }
    const options = { capacity: 50, errorRate: 0.01, window: { seconds: 60, keep: 1 }, seed: 4 }
    const a = await RedisLayeredFilter.create(redis, name, { ...options, clock: () => clocks.a })
    await a.addMany(keys('w0', 10))
    const b = await RedisLayeredFilter.open(redis, name, { clock: () => clocks.b })
    // A moves on a window: it unlists the layer of window 0 and lists one of window 1, which B has not seen.
    clocks.a += 60_000
    await a.addMany(keys('w1', 10))
    // B moves on two: the layer of window 1 is dropped by B's growing script, not by an unlisting.
    clocks.b += 120_000
    await b.addMany(keys('w2', 10))
    const listed = spec.parseLayers(String(await redis.hget(`${name}:meta`, 'layers'))).map((entry) => entry.id)
    expect(listed).toEqual([3])
    const fields = (await redis.hkeys(`${name}:meta`)).filter((field) => /^(ready|count):/.test(field))
    expect(fields.sort()).toEqual(['count:3', 'ready:3'])
    await a.close()
    await b.destroy()
  })

  test('a listed layer not yet ready, unlisted (and its filter destroyed) while another process creates it: no filter is left under its name', async () => {
    const name = uniqueName('strict-unready-unlisted')
    const creator = await RedisLayeredFilter.create(redis, name, { capacity: 40, errorRate: 0.01, growth: 2, seed: 4 })
    // A grower listed layer 1 and died before creating its filter (the spec's writer, its filter removed again).
    const version = String(await redis.hget(`${name}:meta`, 'version'))
    expect(await spec.growLayer(redis, await spec.openLayered(redis, name), version, { window: 0, index: 0, capacity: 40 }, Date.now(), false)).toBe(1)
    await RedisBloomFilter.destroy(redis, `${name}:L1`)
    // B reads the list and layer 1's missing ready:1 in one HMGET; before B creates the layer, a
    // third process opens the filter (creating layer 1), clears it (unlisting and destroying layer 1).
    const client = standaloneClient()
    const send = client.sendCommand.bind(client)
    let cleared = false
    const spy = vi.spyOn(client, 'sendCommand').mockImplementation((command: Command, stream?: unknown) => {
      const sent = send(command, stream as never)
      if (cleared || command.name !== 'hmget' || !command.args.some((arg) => String(arg) === 'ready:1')) return sent
      cleared = true
      return (sent as Promise<unknown>).then(async (reply) => {
        const third = await RedisLayeredFilter.open(redis, name)
        await third.clear()
        await third.close()
        return reply
      }) as never
    })
    const b = await RedisLayeredFilter.open(client, name)
    spy.mockRestore()
    expect(cleared).toBe(true)
    // Layer 1 is no longer listed: whatever B created for it would stay in Redis forever (a scalable layer has no TTL).
    expect(spec.parseLayers(String(await redis.hget(`${name}:meta`, 'layers'))).map((entry) => entry.id)).toEqual([2])
    expect(await redis.exists(`${name}:L1:meta`)).toBe(0)
    expect(await redis.keys(`${name}:L1:*`)).toEqual([])
    expect(await redis.hget(`${name}:meta`, 'ready:1')).toBeNull()
    // B goes on from the list as it is now.
    expect(await b.addMany(keys('after', 10))).toEqual(Array(10).fill(true))
    expect((await b.layers()).map((layer) => layer.count)).toEqual([10])
    await b.close()
    await client.quit()
    await creator.destroy()
  })

  test('a layer whose count is above its capacity (a rebuilt layer that writers filled meanwhile) is full: the next add grows a layer', async () => {
    const name = uniqueName('strict-over-capacity')
    const filter = await RedisLayeredFilter.create(redis, name, { capacity: 40, errorRate: 0.01, growth: 2, seed: 4 })
    await filter.addMany(keys('k', 10))
    await redis.hset(`${name}:meta`, 'count:1', '155024')
    const reopened = await RedisLayeredFilter.open(redis, name)
    expect((await reopened.layers()).map((layer) => [layer.capacity, layer.count])).toEqual([[40, 155_024]])
    await reopened.addMany(keys('more', 5))
    expect((await reopened.layers()).map((layer) => layer.capacity)).toEqual([40, 80])
    expect((await spec.hasLayered(redis, await spec.openLayered(redis, name), [...keys('k', 10), ...keys('more', 5)])).every(Boolean)).toBe(true)
    await reopened.close()
    await filter.destroy()
  })
})
