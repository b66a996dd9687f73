import { afterAll, describe, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { KeyNames } from '../src/layout/key-names.js'
import { clusterClient, fastFail, standaloneClient, uniqueName } from './support/clients.js'
import * as spec from './support/independent.js'

// docs/SPEC.md 9.9, row by row: each damaged state is made on a live filter, and the library and
// the reader written from the spec alone (support/independent.ts) must both answer the code the
// table names, never "absent".

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

/** The code a promise rejects with: a BloomError's or the spec reader's; 'resolved' if it did not reject. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => (error instanceof BloomError || error instanceof spec.SpecError ? error.code : `uncoded ${String(error)}`),
  )
}

const PARAMETERS = { bits: 4096, hashes: 5, shards: 2, seed: 11, layout: 'blocked' } as const
const members = Array.from({ length: 50 }, (_, i) => `m:${i}`)

/** A fixed filter holding `members`, opened by the library and by the spec reader. */
async function fixed(what: string) {
  const name = uniqueName(`damage-${what}`)
  const filter = await RedisBloomFilter.fromParameters(redis, name, PARAMETERS)
  await filter.addMany(members)
  const reader = await spec.openFixed(redis, name)
  return { name, filter, reader, names: new KeyNames(name, PARAMETERS.shards), meta: `${name}:meta` }
}

/** Both readers' answer to a call (has of every member) on the open filter. */
async function callCodes(f: Awaited<ReturnType<typeof fixed>>): Promise<[string, string, string]> {
  return [await codeOf(f.filter.hasMany(members)), await codeOf(f.filter.has(members[0])), await codeOf(spec.hasFixed(redis, f.reader, members))]
}

/** Both readers' answer to opening the filter anew. */
async function openCodes(name: string): Promise<[string, string]> {
  return [await codeOf(RedisBloomFilter.open(redis, name, { lockWait: 0, kind: 'fixed' })), await codeOf(spec.openFixed(redis, name, 0))]
}

/** Rewrites meta fields and mends the check, as a careful tool would, so only the other rules can tell. */
async function editMended(meta: string, fields: Record<string, string>): Promise<void> {
  await redis.hset(meta, fields)
  await redis.hset(meta, 'check', spec.metaCheck(await redis.hgetall(meta)))
}

describe('docs/SPEC.md 9.9: a fixed filter', () => {
  test('N:meta missing: BLOOM_NOT_FOUND on open, BLOOM_DATA_LOST on a call of an open filter', async () => {
    const f = await fixed('meta-gone')
    await redis.del(f.meta)
    expect(await openCodes(f.name)).toEqual(['BLOOM_NOT_FOUND', 'BLOOM_NOT_FOUND'])
    expect(await callCodes(f)).toEqual(['BLOOM_DATA_LOST', 'BLOOM_DATA_LOST', 'BLOOM_DATA_LOST'])
    expect(await codeOf(f.filter.add('new'))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(spec.addFixed(redis, f.reader, ['new']))).toBe('BLOOM_DATA_LOST')
  })

  test('the filter destroyed and created again (another epoch): BLOOM_DATA_LOST on a call of an open filter', async () => {
    const f = await fixed('recreated')
    await RedisBloomFilter.destroy(redis, f.name)
    const again = await RedisBloomFilter.fromParameters(redis, f.name, PARAMETERS)
    expect(await callCodes(f)).toEqual(['BLOOM_DATA_LOST', 'BLOOM_DATA_LOST', 'BLOOM_DATA_LOST'])
    await again.destroy()
  })

  test('N:meta or a shard key of another Redis type: BLOOM_CORRUPT_STORE', async () => {
    const f = await fixed('wrongtype')
    const shard = f.names.shard(1)
    await redis.del(shard)
    await redis.hset(shard, 'x', '1')
    expect(await codeOf(f.filter.hasMany(members))).toBe('BLOOM_CORRUPT_STORE')
    expect(await codeOf(f.filter.add('new'))).toBe('BLOOM_CORRUPT_STORE')
    await redis.del(f.meta)
    await redis.set(f.meta, 'not a hash')
    expect((await openCodes(f.name))[0]).toBe('BLOOM_CORRUPT_STORE')
    await redis.del(f.meta, shard)
  })

  test('a meta without format: BLOOM_CORRUPT_STORE on open', async () => {
    const f = await fixed('no-format')
    await redis.hdel(f.meta, 'format')
    expect(await openCodes(f.name)).toEqual(['BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE'])
    await RedisBloomFilter.destroy(redis, f.name).catch(() => undefined)
  })

  test('a fixed filter opened as layered, and a layered one as fixed: BLOOM_INCOMPATIBLE', async () => {
    const f = await fixed('kind')
    expect(await codeOf(RedisLayeredFilter.open(redis, f.name))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(spec.openLayered(redis, f.name))).toBe('BLOOM_INCOMPATIBLE')
    const name = uniqueName('damage-kind-layered')
    const layered = await RedisLayeredFilter.create(redis, name, { capacity: 100, errorRate: 0.01, growth: 2 })
    expect(await openCodes(name)).toEqual(['BLOOM_INCOMPATIBLE', 'BLOOM_INCOMPATIBLE'])
    await Promise.all([f.filter.destroy(), layered.destroy()])
  })

  test.each([
    // Format 2 is a filter with a feed (docs/SPEC.md 9.12): 3 is one no release knows.
    ['format', '3'],
    ['scheme', '9'],
  ])('%s = %s (check mended): BLOOM_UNSUPPORTED_VERSION on open', async (field, value) => {
    const f = await fixed(`unsupported-${field}`)
    await editMended(f.meta, { [field]: value })
    expect(await openCodes(f.name)).toEqual(['BLOOM_UNSUPPORTED_VERSION', 'BLOOM_UNSUPPORTED_VERSION'])
    await f.filter.destroy()
  })

  test('a check that does not match the fields: BLOOM_CORRUPT_STORE on open', async () => {
    const f = await fixed('check')
    await redis.hset(f.meta, 'seed', '12')
    expect(await openCodes(f.name)).toEqual(['BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE'])
    await redis.hset(f.meta, 'seed', String(PARAMETERS.seed), 'check', '00000000')
    expect(await openCodes(f.name)).toEqual(['BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE'])
    await f.filter.destroy()
  })

  test.each([
    ['impossible parameters', { bits: '4095' }],
    ['an epoch out of range', { epoch: '0' }],
    ['an unknown state', { state: 'sleeping' }],
  ])('%s (check mended): BLOOM_CORRUPT_STORE on open', async (_, fields) => {
    const f = await fixed('impossible')
    await editMended(f.meta, fields)
    expect(await openCodes(f.name)).toEqual(['BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE'])
    await redis.del(f.meta, ...f.filter.keys.slice(1))
  })

  test('a checked field other than epoch changed under an open filter: BLOOM_CORRUPT_STORE on the next call', async () => {
    const f = await fixed('changed')
    await editMended(f.meta, { hashes: '4' })
    expect(await callCodes(f)).toEqual(['BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE'])
    await f.filter.destroy()
  })

  test('state creating for longer than the reader waits: BLOOM_LOCKED on open', async () => {
    const f = await fixed('locked')
    await redis.hset(f.meta, 'state', 'creating')
    expect(await openCodes(f.name)).toEqual(['BLOOM_LOCKED', 'BLOOM_LOCKED'])
    await f.filter.destroy()
  })

  const damages: Array<[string, (key: string) => Promise<unknown>]> = [
    ['deleted', (key) => redis.del(key)],
    ['shorter than its bits and marker', (key) => redis.set(key, 'x')],
    ['zeroed whole (marker gone)', async (key) => redis.set(key, Buffer.alloc(Number(await redis.strlen(key))))],
    ['re-created by a stray write after a loss', async (key) => {
      await redis.del(key)
      return redis.setbit(key, 100, 1)
    }],
    ['another filter’s (another epoch)', (key) => redis.setrange(key, PARAMETERS.bits / PARAMETERS.shards / 8, Buffer.from([0, 0, 0, 2]))],
  ]
  test.each(damages)('shard 0 %s: BLOOM_DATA_LOST on every call and on open', async (what, damage) => {
    const f = await fixed('shard')
    await damage(f.names.shard(0))
    // A deleted shard 0 is left to the first call; any other lost one is noticed by open already.
    const expected = what === 'deleted' ? 'resolved' : 'BLOOM_DATA_LOST'
    expect(await openCodes(f.name)).toEqual([expected, expected])
    expect(await callCodes(f)).toEqual(['BLOOM_DATA_LOST', 'BLOOM_DATA_LOST', 'BLOOM_DATA_LOST'])
    const reopened = await RedisBloomFilter.open(redis, f.name).catch(() => undefined)
    if (reopened !== undefined) expect(await codeOf(reopened.hasMany(members))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(f.filter.addMany(members))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(spec.addFixed(redis, f.reader, members))).toBe('BLOOM_DATA_LOST')
    // Adds never re-create the shard: it is still lost for every reader.
    expect(await callCodes(f)).toEqual(['BLOOM_DATA_LOST', 'BLOOM_DATA_LOST', 'BLOOM_DATA_LOST'])
    await redis.del(f.meta, ...f.filter.keys.slice(1))
  })

  test('a stale writer (the filter destroyed and created again) fails its adds and leaves the new filter’s shards whole', async () => {
    const f = await fixed('stale-writer')
    // Per-bit adds: a BITFIELD writes before its marker is known to be another filter's.
    const stale = await RedisBloomFilter.open(redis, f.name, { blockReads: false, batchConnection: false, scanBytesPerKey: 0 })
    await RedisBloomFilter.destroy(redis, f.name)
    const again = await RedisBloomFilter.fromParameters(redis, f.name, PARAMETERS)
    await again.add('kept')
    expect(await codeOf(stale.addMany(members))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(spec.addFixed(redis, f.reader, members))).toBe('BLOOM_DATA_LOST')
    // Its stray bits are extra false positives at worst; the new filter's keys and markers stay.
    expect(await again.has('kept')).toBe(true)
    expect(await codeOf(again.hasMany(members))).toBe('resolved')
    await again.destroy()
  })

  test('shard 0 ending with its marker at another offset (the meta’s bits edited, check mended): BLOOM_CORRUPT_STORE on open', async () => {
    const f = await fixed('size-edited')
    await editMended(f.meta, { bits: String(PARAMETERS.bits * 2) })
    expect(await openCodes(f.name)).toEqual(['BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE'])
    await redis.del(f.meta, ...f.filter.keys.slice(1))
  })

  test('Redis unreachable: BLOOM_STORE_UNAVAILABLE, never "absent"', async () => {
    const f = await fixed('unreachable')
    const dead = new Redis({ host: '127.0.0.1', port: 1, ...fastFail, lazyConnect: true })
    dead.on('error', () => {})
    expect(await codeOf(RedisBloomFilter.open(dead, f.name, { timeout: 1000 }))).toBe('BLOOM_STORE_UNAVAILABLE')
    dead.disconnect()
    await f.filter.destroy()
  })
})

describe('docs/SPEC.md 9.9: a layered filter', () => {
  async function layered(what: string) {
    const name = uniqueName(`damage-layered-${what}`)
    const filter = await RedisLayeredFilter.create(redis, name, { capacity: 40, errorRate: 0.01, growth: 2, seed: 5 })
    await filter.addMany(members.concat(members.map((m) => `${m}:b`)))
    return { name, filter, reader: await spec.openLayered(redis, name) }
  }

  test('its meta missing under an open filter: BLOOM_NOT_FOUND', async () => {
    const { name, filter, reader } = await layered('meta-gone')
    await redis.del(`${name}:meta`)
    expect(await codeOf(filter.hasMany(members))).toBe('BLOOM_NOT_FOUND')
    expect(await codeOf(spec.hasLayered(redis, reader, members))).toBe('BLOOM_NOT_FOUND')
    expect(await codeOf(RedisLayeredFilter.open(redis, name))).toBe('BLOOM_NOT_FOUND')
  })

  test('a format no release knows: BLOOM_UNSUPPORTED_VERSION; an impossible policy: BLOOM_CORRUPT_STORE', async () => {
    const { name, filter } = await layered('format')
    await redis.hset(`${name}:meta`, 'format', '3')
    expect(await codeOf(RedisLayeredFilter.open(redis, name))).toBe('BLOOM_UNSUPPORTED_VERSION')
    expect(await codeOf(spec.openLayered(redis, name))).toBe('BLOOM_UNSUPPORTED_VERSION')
    await redis.hset(`${name}:meta`, 'format', '1', 'errorRate', '2')
    expect(await codeOf(RedisLayeredFilter.open(redis, name))).toBe('BLOOM_CORRUPT_STORE')
    await redis.hset(`${name}:meta`, 'errorRate', '0.01')
    await filter.destroy()
  })

  test('a layers entry that is not id/window/index/capacity: BLOOM_CORRUPT_STORE', async () => {
    const { name, filter, reader } = await layered('bad-list')
    const layers = String(await redis.hget(`${name}:meta`, 'layers'))
    await redis.hset(`${name}:meta`, 'layers', `${layers},9/x/0/10`, 'version', '100')
    expect(await codeOf(RedisLayeredFilter.open(redis, name))).toBe('BLOOM_CORRUPT_STORE')
    expect(await codeOf(filter.hasMany(members))).toBe('BLOOM_CORRUPT_STORE')
    expect(await codeOf(spec.hasLayered(redis, reader, members))).toBe('BLOOM_CORRUPT_STORE')
    await redis.hset(`${name}:meta`, 'layers', layers)
    await filter.destroy()
  })

  test('a layer listed as ready whose filter is gone: BLOOM_DATA_LOST on open and on a call', async () => {
    const { name, filter, reader } = await layered('layer-gone')
    expect((await filter.layers()).length).toBeGreaterThan(1)
    await RedisBloomFilter.destroy(redis, `${name}:L1`)
    expect(await codeOf(filter.hasMany(members))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(spec.hasLayered(redis, reader, members))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(RedisLayeredFilter.open(redis, name))).toBe('BLOOM_DATA_LOST')
    await redis.del(`${name}:meta`)
  })

  test('a layer’s shard lost: BLOOM_DATA_LOST on a call', async () => {
    const { name, filter, reader } = await layered('layer-shard')
    await redis.del(new KeyNames(`${name}:L1`, 1).shard(0))
    expect(await codeOf(filter.hasMany(members))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(filter.add('new'))).toBe('BLOOM_DATA_LOST')
    expect(await codeOf(spec.hasLayered(redis, reader, members))).toBe('BLOOM_DATA_LOST')
    await filter.destroy()
  })
})

// docs/SPEC.md 9.8: the layered meta's `check`. Each edit below made a fresh open() answer
// "absent" for most members before the field existed; now it is BLOOM_CORRUPT_STORE, on a
// standalone server and on a Cluster, from the library and from the spec's reader.
describe.each([
  ['standalone', standaloneClient],
  ['Cluster', clusterClient],
] as const)('docs/SPEC.md 9.8: the layered meta’s check (%s)', (_, connect) => {
  const client = connect()
  afterAll(async () => {
    await client.quit()
  })
  const NOW = 1_800_000_000_000
  const many = members.concat(members.map((m) => `${m}:b`))

  /** A filter of several layers holding `many`: scalable, or rotating over two windows at a fixed clock. */
  async function made(what: string, rotating = false) {
    const name = uniqueName(`damage-check-${what}`)
    const clock = { now: NOW }
    const options = rotating ? { capacity: 40, errorRate: 0.01, window: { seconds: 60, keep: 3 }, seed: 5, clock: () => clock.now } : { capacity: 40, errorRate: 0.01, growth: 2, seed: 5 }
    const filter = await RedisLayeredFilter.create(client, name, options)
    if (rotating) {
      await filter.addMany(members)
      clock.now += 60_000
      await filter.addMany(members.map((m) => `${m}:b`))
    } else {
      await filter.addMany(many)
    }
    expect((await filter.layers()).length).toBeGreaterThan(1)
    expect(await filter.hasMany(many)).toEqual(many.map(() => true))
    const meta = `${name}:meta`
    return { name, meta, filter, open: () => RedisLayeredFilter.open(client, name, rotating ? { clock: () => clock.now } : {}) }
  }

  /** Fresh opens through both doors and the spec's reader: each must answer BLOOM_CORRUPT_STORE. */
  async function expectCorrupt(f: Awaited<ReturnType<typeof made>>): Promise<void> {
    expect(await codeOf(f.open())).toBe('BLOOM_CORRUPT_STORE')
    expect(await codeOf(RedisBloomFilter.open(client, f.name))).toBe('BLOOM_CORRUPT_STORE')
    expect(await codeOf(spec.openLayered(client as Redis, f.name))).toBe('BLOOM_CORRUPT_STORE')
  }

  test('its seed changed: BLOOM_CORRUPT_STORE', async () => {
    const f = await made('seed')
    await client.hset(f.meta, 'seed', '6')
    await expectCorrupt(f)
    await f.filter.destroy()
  })

  test('its layers list emptied: BLOOM_CORRUPT_STORE', async () => {
    const f = await made('empty')
    const layers = String(await client.hget(f.meta, 'layers'))
    await client.hset(f.meta, 'layers', '')
    await expectCorrupt(f)
    await client.hset(f.meta, 'layers', layers)
    await f.filter.destroy()
  })

  test('one layer dropped from its list: BLOOM_CORRUPT_STORE', async () => {
    const f = await made('drop-one')
    const layers = String(await client.hget(f.meta, 'layers'))
    await client.hset(f.meta, 'layers', layers.split(',').slice(1).join(','))
    await expectCorrupt(f)
    await client.hset(f.meta, 'layers', layers)
    await f.filter.destroy()
  })

  test('its policy switched to rotating: BLOOM_CORRUPT_STORE', async () => {
    const f = await made('policy')
    await client.hset(f.meta, 'policy', 'rotating', 'seconds', '60', 'keep', '2')
    await expectCorrupt(f)
    await client.hset(f.meta, 'policy', 'scalable', 'seconds', '0', 'keep', '0')
    await f.filter.destroy()
  })

  test('a window moved back: BLOOM_CORRUPT_STORE', async () => {
    const f = await made('window', true)
    const layers = String(await client.hget(f.meta, 'layers'))
    // Every entry's window 10 back: no on-time reader would check them.
    const back = layers
      .split(',')
      .map((entry) => entry.split('/').map((part, i) => (i === 1 ? String(Number(part) - 10) : part)).join('/'))
      .join(',')
    await client.hset(f.meta, 'layers', back)
    await expectCorrupt(f)
    await client.hset(f.meta, 'layers', layers)
    await f.filter.destroy()
  })

  test('the same edit with the check mended opens (the check is what refuses it), and an edit under an open filter stops its writers and reports', async () => {
    const f = await made('mended')
    await client.hset(f.meta, 'seed', '6')
    // A writer that must grow refuses to reseal an edited meta (the growing script verifies first).
    expect(await codeOf(f.filter.addMany(Array.from({ length: 400 }, (_, i) => `more:${i}`)))).toBe('BLOOM_CORRUPT_STORE')
    expect(await codeOf(f.filter.layers())).toBe('BLOOM_CORRUPT_STORE')
    await client.hset(f.meta, 'check', spec.layeredCheck(await client.hgetall(f.meta)))
    const reopened = await f.open()
    expect(reopened.policy.seed).toBe(6)
    // Under the open filter, a mended policy edit is still refused: its policy is not the one it opened with.
    expect(await codeOf(f.filter.layers())).toBe('BLOOM_CORRUPT_STORE')
    await reopened.close()
    await f.filter.destroy()
  })

  test('a meta without check (written by an earlier release) opens, grows and stays without one; an edit of it is then not noticed', async () => {
    const f = await made('legacy')
    await client.hdel(f.meta, 'check')
    const legacy = await f.open()
    expect(await legacy.hasMany(many)).toEqual(many.map(() => true))
    const before = (await legacy.layers()).length
    await legacy.addMany(Array.from({ length: 400 }, (_, i) => `more:${i}`))
    expect((await legacy.layers()).length).toBeGreaterThan(before)
    expect(await client.hexists(f.meta, 'check')).toBe(0)
    await client.hset(f.meta, 'seed', '6')
    expect(await codeOf(f.open().then((g) => g.close()))).toBe('resolved')
    await client.hset(f.meta, 'seed', '5')
    await legacy.close()
    await f.filter.destroy()
  })
})
