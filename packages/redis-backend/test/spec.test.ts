import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { createKeyHasher, layeredBatch, layerPolicies } from '@bloomkit/core/store'
// Not for backends, so not in @bloomkit/core/store: the test reads core's own window rule.
import { windowOf } from '../../core/src/layered/layer-policy.js'
import { KeyNames, slotOf } from '../src/layout/key-names.js'
import { markerBytes } from '../src/layout/shard-generations.js'
import { addValue, decodeFeedEntry } from '../src/layout/feed.js'
import { CHECKED_FIELDS, metaCheck } from '../src/layout/meta.js'
import { GROW, LAYERED_CHECKED_FIELDS, layeredCheck, parseEntries } from '../src/layered/layered-meta.js'
import { DEFAULT_SHARD_BITS } from '../src/options.js'
import { bothDeployments, uniqueName } from './support/clients.js'
import * as spec from './support/independent.js'

const { layerPolicyOf } = layerPolicies

// docs/SPEC.md section 9: its vectors, parsed here as core's spec tests parse sections 1–8, and
// compared with the library's functions, with the independent reading of the spec
// (support/independent.ts) and, where a server decides, with a live Redis.

const text = readFileSync(new URL('../../../docs/SPEC.md', import.meta.url), 'utf8')

function block<T>(tag: string): T {
  const match = text.match(new RegExp('```' + tag + '\\n([\\s\\S]*?)\\n```'))
  if (!match) throw new Error(`docs/SPEC.md has no \`\`\`${tag} block`)
  return JSON.parse(match[1]) as T
}

interface TagVector {
  name: string
  shards: number
  nameSlot: number
  shardTags: Array<[number, number, string]>
  key0: string
}
interface CheckVector extends Record<(typeof CHECKED_FIELDS)[number], string> {
  check: string
}
interface MarkerVector {
  epoch: number
  plain: string
  flagged: string
}
interface LayerVector {
  name: string
  id: number
  layer: string
  meta: string
  shards: number
  key0: string
}
interface ListVector {
  layers: string
  entries: Array<{ id: number; window: number; index: number; capacity: number }>
}
interface WindowVector {
  seconds: number
  keep: number
  now: number
  window: number
  oldestChecked: number
  layerTtlSeconds: number
  metaTtlMs: number
}

type LayeredCheckVector = Record<(typeof LAYERED_CHECKED_FIELDS)[number] | 'check', string>

const tags = block<TagVector[]>('json redis tags')
const layeredChecks = block<LayeredCheckVector[]>('json redis layered checks')
const checks = block<CheckVector[]>('json redis checks')
const markers = block<MarkerVector[]>('json redis markers')
const layers = block<LayerVector[]>('json redis layers')
const list = block<ListVector>('json redis list')
const windows = block<WindowVector[]>('json redis windows')
const feedKeys = block<Array<{ name: string; shards: number; feeds: Array<[number, string]> }>>('json redis feed keys')
const feedEntries = block<Array<{ seed: number; keys: string[]; tag: string; value: string }>>('json redis feed entries')

const { redis, cluster } = bothDeployments()

describe('docs/SPEC.md 9.10: hash tags', () => {
  test.each(tags)('$name with $shards shards', async (vector) => {
    const names = new KeyNames(vector.name, vector.shards)
    expect(slotOf(vector.name)).toBe(vector.nameSlot)
    expect(spec.slot(vector.name)).toBe(vector.nameSlot)
    expect(names.shard(0)).toBe(vector.key0)
    expect(spec.shardKeys(vector.name, vector.shards)[0]).toBe(vector.key0)
    for (const [shard, slot, tag] of vector.shardTags) {
      expect(names.slot(shard)).toBe(slot)
      expect(names.shard(shard)).toBe(`${vector.name}:${shard}:{${tag}}`)
      expect(names.nextShard(shard)).toBe(`${vector.name}:${shard}:next:{${tag}}`)
      expect(spec.shardKeys(vector.name, vector.shards)[shard]).toBe(`${vector.name}:${shard}:{${tag}}`)
      // The Cluster itself puts the shard's live, next and scratch keys in that slot.
      for (const key of [names.shard(shard), names.nextShard(shard), names.scratch(shard)]) {
        expect(Number(await cluster.cluster('KEYSLOT', key))).toBe(slot)
      }
    }
  })

  test('the XMODEM check value the spec quotes, and a tag below 36^4 for every slot', () => {
    expect(spec.crc16(new TextEncoder().encode('123456789'))).toBe(0x31c3)
    expect(spec.tags().every((tag) => tag !== undefined && parseInt(tag, 36) < 36 ** 4)).toBe(true)
  })
})

describe('docs/SPEC.md 9.10: meta check values', () => {
  test.each(checks)('epoch $epoch: $check', (vector) => {
    const values = CHECKED_FIELDS.map((field) => vector[field])
    expect(metaCheck(values)).toBe(vector.check)
    expect(spec.metaCheck({ ...vector })).toBe(vector.check)
  })

  test('a filter created by the library holds every field of 9.3 (a new classic filter is scheme 3), with the check the spec computes', async () => {
    const filter = await RedisBloomFilter.fromParameters(redis, uniqueName('spec-meta'), { bits: 8192, hashes: 5, shards: 4, seed: 0, layout: 'classic' })
    const fields = await redis.hgetall(`${filter.name}:meta`)
    expect(Object.keys(fields).sort()).toEqual(['bits', 'check', 'created', 'epoch', 'format', 'generation', 'hashes', 'scheme', 'seed', 'shards', 'state', 'token'])
    expect(fields).toMatchObject({ format: '1', scheme: '3', seed: '0', bits: '8192', hashes: '5', shards: '4', epoch: String(filter.epoch), generation: '1', state: 'ready', token: '' })
    expect(fields.check).toBe(spec.metaCheck(fields))
    expect(Math.abs(Number(fields.created) - Date.now())).toBeLessThan(60_000)
    await filter.destroy()
  })
})

describe('docs/SPEC.md 9.8 and 9.10: the layered meta check', () => {
  test.each(layeredChecks)('$policy, version $version: $check', (vector) => {
    expect(layeredCheck(vector)).toBe(vector.check)
    expect(spec.layeredCheck(vector)).toBe(vector.check)
    // One field's value changed changes it.
    expect(layeredCheck({ ...vector, seed: String(Number(vector.seed) + 1) })).not.toBe(vector.check)
  })

  test.each([
    ['standalone', () => redis],
    ['Cluster', () => cluster],
  ] as const)('the growing script (%s) verifies the stored check first and leaves the one the spec computes', async (_, client) => {
    const meta = `${uniqueName('spec-layered-check')}:meta`
    const [vector] = layeredChecks
    await client().hset(meta, vector)
    const [version, layers, id] = (await client().eval(GROW, 1, meta, vector.version, '0/2/4000', '0', '0')) as string[]
    expect([version, layers, id]).toEqual(['4', `${vector.layers},3/0/2/4000`, '3'])
    const after = await client().hgetall(meta)
    expect(after.check).toBe(spec.layeredCheck(after))
    expect(after.check).not.toBe(vector.check)
    // A stored check that does not match: the script changes nothing.
    await client().hset(meta, 'seed', '1')
    await expect(client().eval(GROW, 1, meta, '4', '0/3/8000', '0', '0')).rejects.toThrow(/BLOOMKIT_CORRUPT_STORE/)
    expect(await client().hget(meta, 'layers')).toBe(after.layers)
    await client().del(meta)
  })

  test('every writer keeps it: create, grow, rotate, rebuild, clear, import (standalone and Cluster)', async () => {
    for (const client of [redis, cluster]) {
      const sealed = async (name: string) => {
        const fields = await client.hgetall(`${name}:meta`)
        expect(fields.check).toMatch(/^[0-9a-f]{8}$/)
        expect(fields.check).toBe(spec.layeredCheck(fields))
      }
      const name = uniqueName('spec-sealed')
      const scalable = await RedisLayeredFilter.create(client, name, { capacity: 20, errorRate: 0.01, growth: 2 })
      await sealed(name)
      await scalable.addMany(Array.from({ length: 200 }, (_, i) => `k:${i}`))
      expect((await scalable.layers()).length).toBeGreaterThan(2)
      await sealed(name)
      await scalable.rebuild(['a', 'b'])
      await sealed(name)
      const snapshot = await scalable.export()
      await scalable.clear()
      await sealed(name)
      await scalable.destroy()
      const imported = await RedisLayeredFilter.import(client, uniqueName('spec-sealed-import'), snapshot)
      await sealed(imported.name)
      await imported.destroy()
      const clock = { now: 1_800_000_000_000 }
      const rotating = await RedisLayeredFilter.create(client, uniqueName('spec-sealed-rotating'), { capacity: 20, errorRate: 0.01, window: { seconds: 60, keep: 2 }, clock: () => clock.now })
      for (let w = 0; w < 4; w++) {
        if (w > 0) clock.now += 60_000
        await rotating.addMany([`w${w}:a`, `w${w}:b`])
      }
      expect((await rotating.layers()).length).toBe(2)
      await sealed(rotating.name)
      await rotating.destroy()
    }
  })
})

describe('docs/SPEC.md 9.10: markers', () => {
  test.each(markers)('epoch $epoch', (vector) => {
    expect(markerBytes(2 * vector.epoch).toString('hex')).toBe(vector.plain)
    expect(markerBytes(2 * vector.epoch + 1).toString('hex')).toBe(vector.flagged)
    expect(Buffer.from(spec.marker(vector.epoch, false)).toString('hex')).toBe(vector.plain)
    expect(Buffer.from(spec.marker(vector.epoch, true)).toString('hex')).toBe(vector.flagged)
  })

  test('a live shard is its bits and the plain marker; a rebuild flags it and the swap leaves the plain one', async () => {
    const filter = await RedisBloomFilter.fromParameters(redis, uniqueName('spec-marker'), { bits: 1024, hashes: 3, shards: 2, seed: 7, layout: 'blocked' })
    const key = new KeyNames(filter.name, 2).shard(1)
    const plain = markerBytes(2 * filter.epoch)
    expect(await redis.strlen(key)).toBe(128 / 2 + 4)
    expect(await redis.getrangeBuffer(key, 64, 67)).toEqual(plain)
    let flagged: Buffer | undefined
    async function* source() {
      flagged = await redis.getrangeBuffer(key, 64, 67)
      yield 'a'
    }
    await filter.rebuild(source())
    expect(flagged).toEqual(markerBytes(2 * filter.epoch + 1))
    expect(await redis.getrangeBuffer(key, 64, 67)).toEqual(plain)
    expect(await redis.hget(`${filter.name}:meta`, 'generation')).toBe('2')
    await filter.destroy()
  })
})

describe('docs/SPEC.md 9.10: a whole shard', () => {
  test('the blocked snapshot of section 7, imported, is each shard’s payload followed by 2·epoch', async () => {
    const hex = text.match(/```hex snapshot blocked\n([0-9a-f]+)\n```/)![1]
    const snapshot = Buffer.from(hex, 'hex')
    const filter = await RedisBloomFilter.import(redis, uniqueName('spec-shard'), snapshot, { kind: 'fixed' })
    const names = new KeyNames(filter.name, 2)
    for (const shard of [0, 1]) {
      const payload = snapshot.subarray(40 + shard * 64, 40 + (shard + 1) * 64)
      expect(await redis.getBuffer(names.shard(shard))).toEqual(Buffer.concat([payload, markerBytes(2 * filter.epoch)]))
    }
    await filter.destroy()
  })
})

describe('docs/SPEC.md 9.10: layered filters', () => {
  test.each(layers)('layer $id of $name', (vector) => {
    expect(`${vector.name}:L${vector.id}`).toBe(vector.layer)
    expect(`${vector.layer}:meta`).toBe(vector.meta)
    expect(new KeyNames(vector.layer, vector.shards).shard(0)).toBe(vector.key0)
    expect(spec.shardKeys(vector.layer, vector.shards)[0]).toBe(vector.key0)
  })

  test('the layers field read as entries', () => {
    expect(parseEntries(list.layers)).toEqual(list.entries)
    expect(spec.parseLayers(list.layers)).toEqual(list.entries)
  })

  test.each(windows)('window arithmetic at T = $now ms, seconds $seconds, keep $keep', async (vector) => {
    const policy = layerPolicyOf({ capacity: 100, errorRate: 0.01, window: { seconds: vector.seconds, keep: vector.keep } })
    expect(windowOf(policy, vector.now)).toBe(vector.window)
    expect(spec.windowOf(vector.seconds, vector.now)).toBe(vector.window)
    expect(vector.oldestChecked).toBe(vector.window - vector.keep + 1)
    const name = uniqueName('spec-window')
    const filter = await RedisLayeredFilter.create(redis, name, { capacity: 100, errorRate: 0.01, window: { seconds: vector.seconds, keep: vector.keep }, clock: () => vector.now })
    await filter.add('k')
    const fields = await redis.hgetall(`${name}:meta`)
    expect(parseEntries(fields.layers)).toEqual([{ id: 1, window: vector.window, index: 0, capacity: 100 }])
    // TTLs run on the server's clock from when they were set: within a few seconds of the spec's values.
    const layerTtl = await redis.pttl(`${name}:L1:meta`)
    expect(layerTtl).toBeLessThanOrEqual(vector.layerTtlSeconds * 1000)
    expect(layerTtl).toBeGreaterThan(vector.layerTtlSeconds * 1000 - 5000)
    const metaTtl = await redis.pttl(`${name}:meta`)
    expect(metaTtl).toBeLessThanOrEqual(vector.metaTtlMs)
    expect(metaTtl).toBeGreaterThan(vector.metaTtlMs - 5000)
    await filter.destroy()
  })
})

describe('docs/SPEC.md 9.2: the default shard cap', () => {
  test('is 33,554,304 bits, as the spec says', () => {
    expect(DEFAULT_SHARD_BITS).toBe(33_554_304)
    expect(text).toContain('**33,554,304 bits**')
  })
})

describe('docs/SPEC.md section 8 and 9.8: counts judged one key at a time', () => {
  // Repeated keys, and a high error rate so that keys often find their bits set by keys before
  // them: every way of batching them must give the counts (and bits) of adding them one by one.
  const sequence = Array.from({ length: 1500 }, (_, i) => `c:${(i * 7919) % 1200}`)
  const options = { capacity: 50, errorRate: 0.2, growth: 2, seed: 42, layout: 'blocked' as const }

  test.each([1, 7, 256, 4096, sequence.length])('batches of %i keys give the memory filter’s counts and snapshot', async (size) => {
    const memory = await LayeredMemoryFilter.create(options)
    const expected = memory.addMany(sequence)
    const filter = await RedisLayeredFilter.create(redis, uniqueName('spec-counts'), options)
    const answers: boolean[] = []
    for (let at = 0; at < sequence.length; at += size) answers.push(...(await filter.addMany(sequence.slice(at, at + size))))
    expect(answers).toEqual(expected)
    expect((await filter.layers()).map((layer) => layer.count)).toEqual(memory.layers().map((layer) => layer.count))
    expect(memory.layers().length).toBeGreaterThan(3)
    expect(Buffer.from(await filter.export())).toEqual(Buffer.from(memory.export()))
    await filter.destroy()
  })
})

test('the golden layered snapshots of the memory, LevelDB and Redis backends are the same bytes', () => {
  const golden = (file: string) => readFileSync(new URL(`../../../test-support/fixtures/golden/${file}.bin`, import.meta.url))
  for (const name of ['scalable-blocked', 'scalable-classic', 'rotating-growing']) {
    expect(golden(`redis-${name}`).equals(golden(`memory-${name}`))).toBe(true)
    expect(golden(`level-${name}`).equals(golden(`memory-${name}`))).toBe(true)
  }
})

describe('docs/SPEC.md 9.12: feeds', () => {
  test.each(feedKeys)('feed keys of $name with $shards shards', async (vector) => {
    const names = new KeyNames(vector.name, vector.shards)
    for (const [shard, key] of vector.feeds) {
      expect(names.feed(shard)).toBe(key)
      expect(spec.shardKeys(vector.name, vector.shards, 'feed:')[shard]).toBe(key)
      // The Cluster puts a shard's feed in the slot of its other keys.
      expect(Number(await cluster.cluster('KEYSLOT', key))).toBe(names.slot(shard))
    }
  })

  test.each(feedEntries)('an add entry of $keys.length keys with seed $seed', async (vector) => {
    const hasher = await createKeyHasher(vector.seed)
    const pairs = new Uint32Array(vector.keys.flatMap((key) => (hasher.hash(key), [hasher.a, hasher.b])))
    const value = Buffer.from(vector.value, 'hex')
    // The library's encoding (with the vector's tag in place of a fresh one) and decoding.
    const batch = layeredBatch.layerBatch({ bits: 8192, hashes: 3, shards: 1, seed: vector.seed, scheme: 2, layout: 'blocked' }, pairs)
    const encoded = addValue(batch, Uint32Array.from(vector.keys.keys()), 0, vector.keys.length)
    expect(encoded.subarray(8).toString('hex')).toBe(vector.value.slice(16))
    const decoded = decodeFeedEntry('1-0', [Buffer.from('h'), value])
    expect(decoded.kind).toBe('add')
    expect(Buffer.from(decoded.tag).toString('hex')).toBe(vector.tag)
    expect([...decoded.pairs]).toEqual([...pairs])
    // The independent reading's.
    const theirs = vector.keys.map((key) => spec.pairOf(key, vector.seed))
    expect(spec.entryValue(Buffer.from(vector.tag, 'hex'), theirs).toString('hex')).toBe(vector.value)
    expect(spec.parseEntry('1-0', [Buffer.from('h'), value]).pairs).toEqual(theirs)
  })

  test('a filter with a feed holds, after one batch, the reset entry and one add entry whose value is the vector’s past its tag', async () => {
    const [vector] = feedEntries
    const filter = await RedisBloomFilter.fromParameters(cluster, uniqueName('spec-feed'), { bits: 8192, hashes: 3, shards: 1, seed: vector.seed, layout: 'blocked' }, { feed: true })
    await filter.addMany(vector.keys)
    const raw = (await cluster.xrangeBuffer(new KeyNames(filter.name, 1).feed(0), '-', '+')) as Array<[Buffer, Buffer[]]>
    expect(raw.map(([, fields]) => fields[0].toString())).toEqual(['r', 'h'])
    expect(raw[0][1][1].length).toBe(8)
    expect(raw[1][1][1].subarray(8).toString('hex')).toBe(vector.value.slice(16))
    await filter.destroy()
  })

  test('decoding refuses entries no writer makes', () => {
    for (const fields of [[Buffer.from('x'), Buffer.alloc(8)], [Buffer.from('h'), Buffer.alloc(12)], [Buffer.from('r'), Buffer.alloc(16)], [Buffer.from('h'), Buffer.alloc(7)], [Buffer.from('h'), Buffer.alloc(8), Buffer.from('r'), Buffer.alloc(8)]]) {
      expect(() => decodeFeedEntry('1-0', fields)).toThrow(expect.objectContaining({ code: 'BLOOM_CORRUPT_STORE' }))
      expect(() => spec.parseEntry('1-0', fields)).toThrow(expect.objectContaining({ code: 'BLOOM_CORRUPT_STORE' }))
    }
  })
})
