import { afterAll, describe, expect, test } from 'vitest'
import { BloomFilter } from '@bloomkit/core'
import { ReferenceBitStore } from '@bloomkit/core/testing'
import { createKeyHasher } from '@bloomkit/core/store'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import { namesOf, standaloneClient, uniqueName } from './support/clients.js'
import { allFeeds, bitsOnlyIn, replay, serverBits } from './support/feeds.js'
import * as spec from './support/independent.js'

// docs/SPEC.md's "Done when": a reader and writer written from the spec alone
// (support/independent.ts imports nothing from bloomkit) share fixed and layered filters with the
// library on a live server, in both directions, including keys added while the library rebuilds.

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

describe('a fixed filter shared with a reader and writer written from the spec', () => {
  test.each([
    ['blocked', { bits: 4 * 8192, hashes: 7, shards: 4, seed: 12345, layout: 'blocked' as const }],
    ['classic', { bits: 3 * 9600, hashes: 6, shards: 3, seed: 0xdeadbeef, layout: 'classic' as const }],
  ])('%s: each finds the other’s keys, and both give the same answers for absent keys', async (_, parameters) => {
    const name = uniqueName('independent-fixed')
    const library = await RedisBloomFilter.fromParameters(redis, name, parameters)
    const ours = keys('library', 1500)
    expect((await library.addMany(ours)).filter(Boolean).length).toBeGreaterThan(1490)
    const other = await spec.openFixed(redis, name)
    expect((await spec.hasFixed(redis, other, ours)).every(Boolean)).toBe(true)
    // Adding what the library added is not new; its own keys are (but for a few false positives).
    expect((await spec.addFixed(redis, other, ours.slice(0, 100))).some(Boolean)).toBe(false)
    const theirs = keys('independent', 1500)
    expect((await spec.addFixed(redis, other, theirs)).filter(Boolean).length).toBeGreaterThan(1450)
    expect((await library.hasMany(theirs)).every(Boolean)).toBe(true)
    const probes = keys('absent', 5000)
    expect(await spec.hasFixed(redis, other, probes)).toEqual(await library.hasMany(probes))
    await library.destroy()
  })

  test('a filter the spec’s writer created opens in the library with the bits a memory filter of the same keys has', async () => {
    const name = uniqueName('independent-created')
    const parameters = { bits: 2 * 4096, hashes: 5, shards: 2, seed: 99, scheme: 2 as const }
    expect(await spec.createFixed(redis, name, parameters)).toBe(true)
    const other = await spec.openFixed(redis, name)
    await spec.addFixed(redis, other, keys('k', 400))
    const library = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(library.parameters).toEqual({ bits: 8192, hashes: 5, shards: 2, seed: 99, layout: 'blocked', scheme: 2 })
    await library.addMany(keys('j', 300))
    const reference = new BloomFilter(new ReferenceBitStore(library.parameters), await createKeyHasher(99))
    await reference.addMany([...keys('k', 400), ...keys('j', 300)])
    // Same bits, so the same snapshot (items is computed from the bits).
    expect(Buffer.from(await library.export())).toEqual(Buffer.from(await reference.export()))
    await library.destroy()
  })

  test('keys the spec’s writer adds while the library rebuilds are kept across the swap', async () => {
    const name = uniqueName('independent-rebuild')
    const library = await RedisBloomFilter.fromParameters(redis, name, { bits: 8 * 8192, hashes: 7, shards: 8, seed: 5, layout: 'blocked' })
    await library.addMany(keys('old', 2000))
    const other = await spec.openFixed(redis, name)
    const during = keys('during', 1000)
    const source = keys('source', 2000)
    async function* rebuildSource() {
      // The live shards are flagged by now: the spec's writer must also write the next generation.
      yield* source.slice(0, 1000)
      // The spec's reader accepts the flagged marker: the old keys are still there until the swap.
      expect((await spec.hasFixed(redis, other, keys('old', 2000))).every(Boolean)).toBe(true)
      expect((await spec.addFixed(redis, other, during.slice(0, 500))).filter(Boolean).length).toBeGreaterThan(490)
      yield* source.slice(1000)
      await spec.addFixed(redis, other, during.slice(500))
    }
    await library.rebuild(rebuildSource())
    expect((await library.hasMany([...source, ...during])).every(Boolean)).toBe(true)
    expect((await spec.hasFixed(redis, other, [...source, ...during])).every(Boolean)).toBe(true)
    // The old keys are gone (but for the rate's false positives): the swap did happen.
    expect((await library.hasMany(keys('old', 2000))).filter(Boolean).length).toBeLessThan(100)
    await library.destroy()
  })
})

describe('a layered filter shared with a reader and writer written from the spec', () => {
  test('scalable: layers the library grows are read by the spec’s reader; layers the spec’s writer grows are read by the library', async () => {
    const name = uniqueName('independent-scalable')
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 200, errorRate: 0.01, growth: 2, seed: 77 })
    const ours = keys('library', 500)
    await library.addMany(ours)
    expect((await library.layers()).length).toBe(2)
    const other = await spec.openLayered(redis, name)
    expect((await spec.hasLayered(redis, other, ours)).every(Boolean)).toBe(true)
    const theirs = keys('independent', 1500)
    await spec.addLayered(redis, other, theirs)
    const layers = await library.layers()
    expect(layers.length).toBe(4)
    expect(layers.map((layer) => layer.capacity)).toEqual([200, 400, 800, 1600])
    expect(layers.map((layer) => layer.count)).toEqual(await spec.countsOf(redis, other))
    for (const layer of layers.slice(0, -1)) expect(layer.count).toBe(layer.capacity)
    expect((await library.hasMany([...ours, ...theirs])).every(Boolean)).toBe(true)
    const probes = keys('absent', 3000)
    expect(await spec.hasLayered(redis, other, probes)).toEqual(await library.hasMany(probes))
    // And on: the library adds into the layer the spec's writer created.
    await library.addMany(keys('more', 300))
    expect((await spec.hasLayered(redis, other, keys('more', 300))).every(Boolean)).toBe(true)
    await library.destroy()
  })

  test('a layer the spec’s writer listed and created, sized its own way, but never marked ready: the library opens it as it is', async () => {
    const name = uniqueName('independent-unready')
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 100, errorRate: 0.01, growth: 2, seed: 8 })
    await library.addMany(keys('first', 100))
    const other = await spec.openLayered(redis, name)
    const version = String(await redis.hget(`${name}:meta`, 'version'))
    const id = await spec.growLayer(redis, other, version, { window: 0, index: 1, capacity: 200 }, Date.now(), false)
    expect(id).toBe(2)
    expect(await redis.hget(`${name}:meta`, 'ready:2')).toBeNull()
    // A library process opening now finds the layer listed but not ready, and its filter already there.
    const reopened = await RedisLayeredFilter.open(redis, name)
    const added = await reopened.addMany(keys('second', 150))
    // A layer counts the keys that were new to it (section 8): a false positive is not counted.
    const counted = added.filter(Boolean).length
    expect(counted).toBeGreaterThan(140)
    const layers = await reopened.layers()
    expect(layers.map((layer) => [layer.capacity, layer.count])).toEqual([
      [100, 100],
      [200, counted],
    ])
    // Its parameters are the spec writer's, not those the library would have sized.
    const { bits, hashes, shards, seed } = (await spec.openFixed(redis, `${name}:L2`)).p
    expect(layers[1].parameters).toMatchObject({ bits, hashes, shards, seed })
    expect(await redis.hget(`${name}:meta`, 'ready:2')).toBe('1')
    expect((await spec.hasLayered(redis, other, [...keys('first', 100), ...keys('second', 150)])).every(Boolean)).toBe(true)
    await library.destroy()
  })

  test('keys the spec’s writer adds once a layered rebuild has listed its layer are kept when the old layers go', async () => {
    const name = uniqueName('independent-layered-rebuild')
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, growth: 2, seed: 21 })
    await library.addMany(keys('old', 2500))
    const other = await spec.openLayered(redis, name)
    const before = String(await redis.hget(`${name}:meta`, 'layers'))
    const source = keys('source', 40_000)
    const rebuilt = library.rebuild(source)
    // Wait for the rebuilt layer to be listed (the list changes), then add while it is filled.
    while (String(await redis.hget(`${name}:meta`, 'layers')) === before) await new Promise((resolve) => setTimeout(resolve, 1))
    const during = keys('during', 300)
    await spec.addLayered(redis, other, during)
    await rebuilt
    expect((await library.layers())[0].capacity).toBe(40_000)
    expect((await library.hasMany([...source, ...during])).every(Boolean)).toBe(true)
    expect((await spec.hasLayered(redis, other, [...source.slice(0, 3000), ...during])).every(Boolean)).toBe(true)
    await library.destroy()
  })

  test('rotating: both place keys in the window of their clock and check the last keep windows', async () => {
    const name = uniqueName('independent-rotating')
    let now = 3_600_000
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 300, errorRate: 0.01, window: { seconds: 60, keep: 2 }, seed: 3, clock: () => now })
    await library.addMany(keys('w60', 200))
    const other = await spec.openLayered(redis, name)
    expect((await spec.hasLayered(redis, other, keys('w60', 200), now)).every(Boolean)).toBe(true)
    now += 60_000
    await spec.addLayered(redis, other, keys('w61', 200), now)
    expect((await library.hasMany([...keys('w60', 200), ...keys('w61', 200)])).every(Boolean)).toBe(true)
    expect((await library.layers()).map((layer) => [layer.window, layer.count])).toEqual([
      [60, 200],
      [61, 200],
    ])
    now += 60_000
    // Window 60 has passed for both: its keys are forgotten (but for false positives of window 61).
    expect((await library.hasMany(keys('w60', 200))).filter(Boolean).length).toBeLessThan(10)
    expect(await spec.hasLayered(redis, other, keys('w60', 200), now)).toEqual(await library.hasMany(keys('w60', 200)))
    expect((await spec.hasLayered(redis, other, keys('w61', 200), now)).every(Boolean)).toBe(true)
    await library.destroy()
  })
})

// docs/SPEC.md 9.3, 9.4 and 9.8 on reader strictness: a meta field holding what no writer writes
// (a number in another form, an unknown kind, a window on a scalable filter, a list's garbage) is
// refused, in the order the open steps give, with the same code by the library and by the reader
// written from the spec. Edits of checked fields mend the check, so only the rule under test refuses.
describe('reader strictness: the library and the spec’s reader agree on each damaged meta', () => {
  type Row = readonly [string, Record<string, string> | ((fields: Record<string, string>) => Record<string, string>), 'mend' | 'stale', string]
  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      (value) => {
        void (value as { close?: () => Promise<void> }).close?.()
        return 'opened'
      },
      (error: unknown) => (error as { code?: string }).code ?? `uncoded ${String(error)}`,
    )

  /** Applies `edit` to the meta (and mends `check` with `mend`), opens it through both readers, and puts the meta back. */
  async function agree(meta: string, edit: Row[1], how: Row[2], mend: (fields: Record<string, string>) => string, open: () => [Promise<unknown>, Promise<unknown>]) {
    const before = await redis.hgetall(meta)
    await redis.hset(meta, typeof edit === 'function' ? edit(before) : edit)
    if (how === 'mend' && before.check !== undefined) await redis.hset(meta, 'check', mend(await redis.hgetall(meta)))
    const codes = await Promise.all(open().map(codeOf))
    await redis.del(meta)
    await redis.hset(meta, before)
    return codes
  }

  const fixedRows: Row[] = [
    ['hashes = 07', { hashes: '07' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['seed = +6', { seed: '+6' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['bits = 8192.0', { bits: '8192.0' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['epoch with a leading zero', (f) => ({ epoch: `0${f.epoch}` }), 'mend', 'BLOOM_CORRUPT_STORE'],
    ['scheme = 02 (not a later scheme: malformed)', { scheme: '02' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['scheme = 9 (a later scheme)', { scheme: '9' }, 'mend', 'BLOOM_UNSUPPORTED_VERSION'],
    ['generation = two', { generation: 'two' }, 'stale', 'BLOOM_CORRUPT_STORE'],
    ['kind = bogus (a later kind)', { kind: 'bogus' }, 'stale', 'BLOOM_UNSUPPORTED_VERSION'],
  ]
  test.each(fixedRows)('fixed: %s', async (_, edit, how, expected) => {
    const name = uniqueName('strict-fixed')
    const library = await RedisBloomFilter.fromParameters(redis, name, { bits: 8192, hashes: 5, shards: 1, seed: 6, layout: 'blocked' })
    const codes = await agree(`${name}:meta`, edit, how, spec.metaCheck, () => [RedisBloomFilter.open(redis, name, { kind: 'fixed', lockWait: 0 }), spec.openFixed(redis, name, 0)])
    expect(codes).toEqual([expected, expected])
    await library.destroy()
  })

  const layeredRows: Row[] = [
    ['scalable with seconds = 60 (9.8: 0)', { seconds: '60' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['scalable with keep = 2 (9.8: 0)', { keep: '2' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['an unknown policy and a stale check: the check comes first', { policy: 'sliding' }, 'stale', 'BLOOM_CORRUPT_STORE'],
    ['an unknown policy, check mended', { policy: 'sliding' }, 'mend', 'BLOOM_UNSUPPORTED_VERSION'],
    ['kind = bogus (a later kind)', { kind: 'bogus' }, 'stale', 'BLOOM_UNSUPPORTED_VERSION'],
    ['capacity = 040', { capacity: '040' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['errorRate = 0.010 (not its shortest form)', { errorRate: '0.010' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['tightening = 1', { tightening: '1' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['version = x', { version: 'x' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['version = 0', { version: '0' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['nextId = abc', { nextId: 'abc' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['nextId below a listed id', { nextId: '1' }, 'mend', 'BLOOM_CORRUPT_STORE'],
    ['a layers entry with a leading zero', (f) => ({ layers: f.layers.replace(/^1\//, '01/') }), 'mend', 'BLOOM_CORRUPT_STORE'],
    ['a layers entry listed twice', (f) => ({ layers: `${f.layers},${f.layers.split(',')[0]}` }), 'mend', 'BLOOM_CORRUPT_STORE'],
    ['count:1 = lots', { 'count:1': 'lots' }, 'stale', 'BLOOM_CORRUPT_STORE'],
    ['count:1 = -3', { 'count:1': '-3' }, 'stale', 'BLOOM_CORRUPT_STORE'],
    ['ready:2 = yes', { 'ready:2': 'yes' }, 'stale', 'BLOOM_CORRUPT_STORE'],
    ['count:1 above its capacity (a rebuilt layer that writers filled meanwhile): accepted', { 'count:1': '155024' }, 'stale', 'opened'],
    ['ready:<id> of an id no longer listed: ignored', { 'ready:77': 'left over', 'count:77': 'left over' }, 'stale', 'opened'],
  ]
  test.each(layeredRows)('layered: %s', async (_, edit, how, expected) => {
    const name = uniqueName('strict-layered')
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 40, errorRate: 0.01, growth: 2, seed: 6 })
    await library.addMany(keys('k', 60))
    expect((await library.layers()).length).toBe(2)
    const codes = await agree(`${name}:meta`, edit, how, spec.layeredCheck, () => [RedisLayeredFilter.open(redis, name), spec.openLayered(redis, name)])
    expect(codes).toEqual([expected, expected])
    await library.close()
    await RedisLayeredFilter.destroy(redis, name)
  })

  test('layered: no format, kind layered: not a bloomkit filter (step 2 comes before the kind’s own checks)', async () => {
    const name = uniqueName('strict-layered-format')
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 40, errorRate: 0.01, growth: 2, seed: 6 })
    await redis.hdel(`${name}:meta`, 'format')
    expect([await codeOf(RedisLayeredFilter.open(redis, name)), await codeOf(spec.openLayered(redis, name))]).toEqual(['BLOOM_CORRUPT_STORE', 'BLOOM_CORRUPT_STORE'])
    await library.close()
    await redis.del(`${name}:meta`)
  })
})

/** The spec's reader over many keys, 500 at a time (its BITFIELD_RO takes every probe as an argument). */
async function specHas(other: spec.Layered, all: string[]): Promise<boolean[]> {
  const answers: boolean[] = []
  for (let at = 0; at < all.length; at += 500) answers.push(...(await spec.hasLayered(redis, other, all.slice(at, at + 500))))
  return answers
}

describe('layered rebuilds seen by other instances', () => {
  test('the spec’s writer rebuilds while library instances hold the list from before: they answer on, judge re-added keys against the rebuilt layer alone, and find them once the old layers are gone', async () => {
    const name = uniqueName('independent-rebuild-seen')
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 500, errorRate: 0.0001, growth: 2, seed: 23 })
    const again = keys('again', 200)
    await library.addMany([...keys('old', 1500), ...again])
    const stale = await RedisLayeredFilter.open(redis, name)
    expect((await stale.hasMany(again)).every(Boolean)).toBe(true)
    const other = await spec.openLayered(redis, name)
    const source = keys('source', 3000)
    await spec.rebuildLayered(redis, other, source, async () => {
      // The rebuilt layer is listed and filled, the old layers not yet dropped: both writers judge
      // re-added keys against the rebuilt layer alone (at most its false positives, 5e-5, are not new).
      expect((await stale.addMany(again.slice(0, 100))).filter(Boolean).length).toBeGreaterThanOrEqual(98)
      expect((await spec.addLayered(redis, other, again.slice(100))).filter(Boolean).length).toBeGreaterThanOrEqual(98)
      expect((await library.hasMany(keys('old', 1500))).every(Boolean)).toBe(true)
    })
    // Both library instances still hold a list naming the dropped, destroyed layers.
    for (const filter of [library, stale]) expect((await filter.hasMany([...source, ...again])).every(Boolean)).toBe(true)
    expect((await specHas(other, [...source, ...again])).every(Boolean)).toBe(true)
    const probes = keys('absent', 3000)
    expect(await library.hasMany(probes)).toEqual(await specHas(other, probes))
    expect(await stale.hasMany(keys('old', 1500))).toEqual(await specHas(other, keys('old', 1500)))
    expect((await library.layers()).map((layer) => layer.count)).toEqual(await spec.countsOf(redis, other))
    await stale.close()
    await library.destroy()
  })

  test('the library rebuilds while the spec’s writer adds and another library instance holds the list from before: all three agree afterwards', async () => {
    const name = uniqueName('independent-rebuild-agree')
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 1000, errorRate: 0.001, growth: 2, seed: 24 })
    await library.addMany(keys('old', 2500))
    const stale = await RedisLayeredFilter.open(redis, name)
    expect((await stale.hasMany(keys('old', 2500))).every(Boolean)).toBe(true)
    const other = await spec.openLayered(redis, name)
    const source = keys('source', 40_000)
    const rebuilt = library.rebuild(source)
    while (!String(await redis.hget(`${name}:meta`, 'layers')).split(',').some((entry, i) => i > 0 && entry.split('/')[2] === '0')) await new Promise((resolve) => setTimeout(resolve, 1))
    // Old keys re-added while the rebuilt layer is filled: new to it, so written and kept.
    expect((await spec.addLayered(redis, other, keys('old', 300))).filter(Boolean).length).toBeGreaterThanOrEqual(295)
    await rebuilt
    const all = [...source.slice(0, 3000), ...keys('old', 300)]
    expect((await stale.hasMany(all)).every(Boolean)).toBe(true)
    expect((await specHas(other, all)).every(Boolean)).toBe(true)
    const probes = [...keys('absent', 3000), ...keys('old', 2500).slice(300)]
    const answers = await specHas(other, probes)
    expect(await stale.hasMany(probes)).toEqual(answers)
    expect(await library.hasMany(probes)).toEqual(answers)
    await stale.close()
    await library.destroy()
  })
})

describe('rotating windows across re-adds, shared with a reader and writer written from the spec', () => {
  const minute = 60_000

  test('a key either side re-adds in a later window is written into it by either, and both find it keep windows from the re-add', async () => {
    const name = uniqueName('independent-readds')
    let now = 1_000 * minute
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 500, errorRate: 0.001, window: { seconds: 60, keep: 3 }, seed: 11, clock: () => now })
    const other = await spec.openLayered(redis, name)
    const ours = keys('library', 200)
    const theirs = keys('spec', 200)
    const newIn1000 = [...(await library.addMany(ours)), ...(await spec.addLayered(redis, other, theirs, now))].filter(Boolean).length
    now += 2 * minute
    // Each adds again what the other added two windows ago: new to window 1002, so written into it.
    const newIn1002 = [...(await spec.addLayered(redis, other, ours, now)), ...(await library.addMany(theirs))].filter(Boolean).length
    expect(newIn1002).toBe(400)
    const counts = (await library.layers()).map((layer) => [layer.window, layer.count])
    expect(counts).toEqual([
      [1000, newIn1000],
      [1002, 400],
    ])
    expect(counts.map(([, count]) => count)).toEqual(await spec.countsOf(redis, other, now))
    now += minute
    // Window 1000 has passed: what was added again in 1002 is still found, by both.
    const all = [...ours, ...theirs]
    expect((await library.hasMany(all)).every(Boolean)).toBe(true)
    expect((await spec.hasLayered(redis, other, all, now)).every(Boolean)).toBe(true)
    now += 2 * minute
    // And forgotten once 1002 has passed too (but for false positives), the same by both.
    expect((await library.hasMany(all)).filter(Boolean).length).toBeLessThan(5)
    expect(await spec.hasLayered(redis, other, all, now)).toEqual(await library.hasMany(all))
    await library.destroy()
  })

  test('first-time keys that an older window’s layer holds by chance are written into the current window by both', async () => {
    const name = uniqueName('independent-older-false-positives')
    let now = 2_000 * minute
    // A window's layer is sized for 1000 keys at 25 %: a full older layer seems to hold about a quarter of new keys.
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 1000, errorRate: 0.5, window: { seconds: 60, keep: 2 }, seed: 12, clock: () => now })
    const other = await spec.openLayered(redis, name)
    await library.addMany(keys('old', 1000))
    now += minute
    const fresh = [...keys('library', 400), ...keys('spec', 400)]
    expect((await spec.hasLayered(redis, other, fresh, now)).filter(Boolean).length).toBeGreaterThan(100)
    await library.addMany(fresh.slice(0, 400))
    await spec.addLayered(redis, other, fresh.slice(400), now)
    now += minute
    expect((await library.hasMany(fresh)).every(Boolean)).toBe(true)
    expect((await spec.hasLayered(redis, other, fresh, now)).every(Boolean)).toBe(true)
    await library.destroy()
  })

  test('a writer keep windows behind is refused (BLOOM_CLOCK_SKEW) by both; one behind adds into the newest window, so the list stays in order and exports', async () => {
    const name = uniqueName('independent-skew')
    let now = 3_000 * minute
    const library = await RedisLayeredFilter.create(redis, name, { capacity: 100, errorRate: 0.001, window: { seconds: 60, keep: 2 }, seed: 13, clock: () => now })
    const other = await spec.openLayered(redis, name)
    await library.add('w3000')
    now += 2 * minute
    await library.add('w3002')
    const before = await redis.hget(`${name}:meta`, 'layers')
    const refused = await spec.addLayered(redis, other, ['late'], now - 2 * minute).then(() => undefined, (error: unknown) => error)
    expect(refused).toBeInstanceOf(spec.SpecError)
    expect((refused as spec.SpecError).code).toBe('BLOOM_CLOCK_SKEW')
    const lagging = await RedisLayeredFilter.open(redis, name, { clock: () => now - 2 * minute })
    expect((await lagging.add('late').then(() => 'added', (error: { code?: string }) => error.code))).toBe('BLOOM_CLOCK_SKEW')
    expect(await redis.hget(`${name}:meta`, 'layers')).toBe(before)
    // One window behind: both add into window 3002, the newest.
    expect(await spec.addLayered(redis, other, ['spec-late'], now - minute)).toEqual([true])
    const late = await RedisLayeredFilter.open(redis, name, { clock: () => now - minute })
    expect(await late.add('library-late')).toBe(true)
    expect((await library.layers()).map((layer) => layer.window)).toEqual([3002])
    const copy = await RedisLayeredFilter.import(redis, uniqueName('independent-skew-copy'), await library.export(), { clock: () => now })
    expect(await copy.hasMany(['w3002', 'spec-late', 'library-late'])).toEqual([true, true, true])
    for (const filter of [lagging, late]) await filter.close()
    await copy.destroy()
    await library.destroy()
  })
})

describe('a filter with a feed (docs/SPEC.md 9.12) shared with the spec’s writer', () => {
  const parameters = { bits: 4 * 8192, hashes: 7, shards: 4, seed: 4242, scheme: 2 as const }

  /** The server's bits of each shard, as the spec's reader lays them out. */
  const shardsOf = async (other: spec.Fixed) => Promise.all(other.live.map((key) => redis.getrangeBuffer(key, 0, other.B - 1)))

  test('the spec’s writes appear in the feeds as the library’s replica-side decoding reads them', async () => {
    const library = await RedisBloomFilter.fromParameters(redis, uniqueName('independent-feed'), { ...parameters, layout: 'blocked' }, { feed: true })
    const other = await spec.openFixed(redis, library.name)
    expect(other.feedLength).toBe(1024)
    await spec.addFixed(redis, other, keys('spec', 1200))
    const feeds = await allFeeds(redis, namesOf(library), 4)
    expect(feeds.flat().filter((entry) => entry.kind === 'add')).toHaveLength(4)
    const [server, replayed] = [await serverBits(redis, namesOf(library), library.parameters), replay(library.parameters, feeds)]
    expect(bitsOnlyIn(server, replayed)).toEqual([])
    expect(bitsOnlyIn(replayed, server)).toEqual([])
    // And the library's own writes read back through the spec's decoding.
    await library.addMany(keys('library', 800))
    const theirs = await spec.replayFeeds(redis, other)
    expect(Buffer.concat(theirs)).toEqual(Buffer.concat(await shardsOf(other)))
    await library.destroy()
  })

  test('a filter with a feed the spec’s writer created: the library writes through its feeds, the spec’s reader replays them, and a clear resets them', async () => {
    const name = uniqueName('independent-feed-created')
    expect(await spec.createFixed(redis, name, parameters, 0, 64)).toBe(true)
    const other = await spec.openFixed(redis, name)
    for (let s = 0; s < 4; s++) expect((await spec.readFeed(redis, other, s)).map((entry) => entry.kind)).toEqual(['r'])
    const library = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect((await library.info()).feedLength).toBe(64)
    await library.addMany(keys('library', 1000))
    await spec.addFixed(redis, other, keys('spec', 500))
    expect(Buffer.concat(await spec.replayFeeds(redis, other))).toEqual(Buffer.concat(await shardsOf(other)))
    await library.clear()
    for (let s = 0; s < 4; s++) expect((await spec.readFeed(redis, other, s)).map((entry) => entry.kind)).toEqual(['r'])
    await spec.addFixed(redis, other, keys('after', 300))
    expect(Buffer.concat(await spec.replayFeeds(redis, other))).toEqual(Buffer.concat(await shardsOf(other)))
    expect((await library.hasMany(keys('after', 300))).every(Boolean)).toBe(true)
    await library.destroy()
  })
})
