import { describe, expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, commandsOf, namesOf, uniqueName } from './support/clients.js'
import { SET_BITS, TEST_BITS, testOrSetGroup } from '@bloomkit/core/store'
import { markerOf } from '../src/bits/whole-shard.js'

const { redis, cluster } = bothDeployments()

test('core\'s kernel, as the whole-shard path uses it, sets bits in order and reports a key new when a bit was unset before it, as BITFIELD SET does, and tests them', () => {
  const hashes = 3
  // Keys 0 and 2 are the same key; key 1 shares a bit with key 0; key 3 is set beforehand.
  const positions = new Uint32Array([1, 9, 17, 17, 30, 31, 1, 9, 17, 0, 8, 63])
  const keys = new Uint32Array([0, 1, 2, 3])
  const shard = new Uint8Array(8)
  shard[0] = 0x80 // bit 0
  shard[1] = 0x80 // bit 8
  shard[7] = 0x01 // bit 63
  const out = new Uint8Array(4)
  testOrSetGroup(shard, positions, hashes, keys, 0, 4, out, SET_BITS)
  expect(Array.from(out)).toEqual([1, 1, 0, 0])
  // Bits 1, 9, 17, 30, 31 are now set besides 0, 8, 63.
  expect(Array.from(shard)).toEqual([0xc0, 0xc0, 0x40, 0x03, 0, 0, 0, 0x01])
  const found = new Uint8Array(4)
  testOrSetGroup(shard, positions, hashes, keys, 0, 4, found, TEST_BITS)
  expect(Array.from(found)).toEqual([1, 1, 1, 1])
  testOrSetGroup(new Uint8Array(8), positions, hashes, keys, 1, 3, found, TEST_BITS)
  expect(Array.from(found)).toEqual([1, 0, 0, 1])
})

test('markerOf reads the 4 bytes after the bits, big-endian, and −1 for a missing or truncated shard', () => {
  expect(markerOf(new Uint8Array([0xff, 0x80, 0, 0, 0x03]), 1)).toBe(0x80000003)
  expect(markerOf(new Uint8Array([0xff, 0x80, 0, 0]), 1)).toBe(-1)
  expect(markerOf(new Uint8Array(0), 1)).toBe(-1)
})

describe.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('whole-shard batches on %s', (_, client) => {
  test('answer exactly as BITFIELD batches (duplicates in a batch included), keep the TTL and leave no scratch key', async () => {
    const parameters = { bits: 4 * 8 * 4096, hashes: 7, shards: 4, seed: 7 }
    // Commands through the client are counted, so the per-bit filter takes the client's connection.
    const bitfield = await RedisBloomFilter.fromParameters(client, uniqueName('per-bit'), parameters, { scanBytesPerKey: 0, batchConnection: false })
    const whole = await RedisBloomFilter.fromParameters(client, uniqueName('whole'), parameters, { scanBytesPerKey: 64 })
    await Promise.all([bitfield.setTtl(3600), whole.setTtl(3600)])
    // 1 500 distinct keys, a third of them twice in the same batch: ~375 keys a shard, above 4096 / 64.
    const keys = Array.from({ length: 2000 }, (_, i) => `k:${i % 1500}`)
    const commands = { bitfield: [] as string[], whole: [] as string[] }
    const added: boolean[][] = []
    commands.bitfield = await commandsOf(client, async () => added.push(await bitfield.addMany(keys)))
    commands.whole = await commandsOf(client, async () => added.push(await whole.addMany(keys)))
    expect(added[1]).toEqual(added[0])
    expect(added[0][1500]).toBe(false) // the second 'k:0' of the batch
    expect(added[0].filter(Boolean).length).toBeGreaterThan(1450)
    const probes = [...keys.slice(0, 1500), ...Array.from({ length: 3000 }, (_, i) => `p:${i}`)]
    const found: boolean[][] = []
    commands.bitfield.push(...(await commandsOf(client, async () => found.push(await bitfield.hasMany(probes)))))
    commands.whole.push(...(await commandsOf(client, async () => found.push(await whole.hasMany(probes)))))
    expect(found[1]).toEqual(found[0])
    expect(found[0].slice(0, 1500).every(Boolean)).toBe(true)
    expect(new Uint8Array(await whole.export()).subarray(40)).toEqual(new Uint8Array(await bitfield.export()).subarray(40))
    // Each plan really ran: BITFIELDs for one, GETRANGE reads and MULTI/EXEC ORs for the other.
    expect(commands.bitfield.filter((name) => /^bitfield/.test(name)).length).toBeGreaterThanOrEqual(8)
    expect(commands.bitfield.filter((name) => /^(getrange|exec)$/.test(name))).toEqual([])
    expect(commands.whole.filter((name) => /^bitfield/.test(name))).toEqual([])
    expect(commands.whole.filter((name) => name === 'exec').length).toBe(4)
    expect(commands.whole.filter((name) => name === 'getrange').length).toBe(8)
    for (let shard = 0; shard < 4; shard++) {
      expect(await client.pttl(namesOf(whole).shard(shard))).toBeGreaterThan(3_500_000)
      expect(await client.exists(namesOf(whole).scratch(shard))).toBe(0)
    }
    await Promise.all([bitfield.destroy(), whole.destroy()])
  })

  test('a shard larger than 4 MiB is never read or ORed whole, however many keys a batch has there', async () => {
    const filter = await RedisBloomFilter.fromParameters(client, uniqueName('large'), { bits: 4 * 2 ** 23, hashes: 7, shards: 1, seed: 1 }, { scanBytesPerKey: 2 ** 31 - 1, batchConnection: false })
    const keys = Array.from({ length: 5000 }, (_, i) => `k:${i}`)
    const commands = await commandsOf(client, async () => {
      expect((await filter.addMany(keys)).every(Boolean)).toBe(true)
      expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
    })
    expect(commands.filter((name) => /^(getrange|exec)$/.test(name))).toEqual([])
    expect(commands.filter((name) => /^bitfield/.test(name)).length).toBe(20)
    await filter.destroy()
  })
})
