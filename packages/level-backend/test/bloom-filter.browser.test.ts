import { afterAll, expect, test } from 'vitest'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { FOLDER_KINDS, openKind } from './support/kinds.js'

// browser-level keeps each location in an IndexedDB database named with this prefix.
const PREFIX = 'level-js-'
const names: string[] = []
const nameOf = (what: string) => {
  const name = `bloomkit-${what}-${Date.now()}-${Math.random().toString(36).slice(2)}`
  names.push(name)
  return name
}

afterAll(async () => {
  for (const name of names) {
    await new Promise((resolve) => {
      const request = indexedDB.deleteDatabase(PREFIX + name)
      request.onsuccess = request.onerror = request.onblocked = resolve
    })
  }
})

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

test('runs in a browser: level resolves to IndexedDB, not to the Node build', () => {
  expect(typeof indexedDB).toBe('object')
  expect(typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node).not.toBe('string')
})

test('creates, fills, reopens and queries a filter in IndexedDB, with a cache smaller than the filter', async () => {
  const name = nameOf('fill')
  // 4 KiB pages and a 16 KiB cache against a ~24 KiB filter: pages move to and from IndexedDB.
  const options = { capacity: 20_000, errorRate: 0.01, pageBytes: 4096, cacheBytes: 16_384 }
  const filter = await LevelBloomFilter.create(name, options)
  expect(filter.parameters.bits / 8).toBeGreaterThan(options.cacheBytes)
  const added = await filter.addMany(keys('in', 20_000))
  expect(added.filter(Boolean).length).toBeGreaterThan(19_500)
  const snapshot = await filter.export()
  await filter.close()

  const again = await LevelBloomFilter.open(name, { kind: 'fixed', cacheBytes: 16_384 })
  expect(again.parameters).toEqual(filter.parameters)
  expect((await again.hasMany(keys('in', 20_000))).every(Boolean)).toBe(true)
  const probes = await again.hasMany(keys('out', 20_000))
  const rate = probes.filter(Boolean).length / probes.length
  expect(rate).toBeLessThan(0.02)
  expect(Math.abs((await again.estimateCount()) - 20_000)).toBeLessThan(400)
  const reread = await again.export()
  expect(reread.length).toBe(snapshot.length)
  expect(reread.every((byte, i) => byte === snapshot[i])).toBe(true)
  await again.close()
})

test('in the browser too: a missing name is BLOOM_NOT_FOUND, another filter is BLOOM_INCOMPATIBLE, a bad snapshot yields nothing', async () => {
  await expect(LevelBloomFilter.open(nameOf('missing'))).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
  // Not BLOOM_INCOMPATIBLE "holds a layered filter": opening a name makes an empty IndexedDB database, a manifest's too.
  for (const kind of ['fixed', 'layered', 'counting'] as const) {
    const missing = nameOf(`missing-${kind}`)
    names.push(`${missing}/manifest`)
    await expect(LevelBloomFilter.open(missing, { kind })).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
  }
  const name = nameOf('other')
  const filter = await LevelBloomFilter.create(name, { capacity: 1000, errorRate: 0.01 })
  const snapshot = await filter.export()
  await filter.close()
  await expect(LevelBloomFilter.create(name, { capacity: 5000, errorRate: 0.01 })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
  const bad = snapshot.slice()
  bad[50] ^= 1
  const target = nameOf('bad-import')
  await expect(LevelBloomFilter.import(target, bad)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_SNAPSHOT' })
  await expect(LevelBloomFilter.open(target)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
})

test.each(['fixed', 'layered', 'counting'] as const)('in IndexedDB too, open finds a %s filter by its stored kind (with kind left out or its own) and refuses another kind naming both', async (kind) => {
  const name = nameOf(`any-kind-${kind}`)
  // A layered filter's manifest and layers are IndexedDB databases of their own, named under it.
  names.push(`${name}/manifest`, `${name}/L1`, `${name}/L2`)
  const extra = kind === 'layered' ? { growth: 2 } : kind === 'counting' ? { counting: true as const } : {}
  const filter = await LevelBloomFilter.create(name, { capacity: 50, errorRate: 0.01, ...extra })
  await filter.addMany(keys(kind, 80))
  await filter.close()
  for (const asked of [undefined, kind]) {
    const opened = await LevelBloomFilter.open(name, { kind: asked })
    expect(opened.kind).toBe(kind)
    expect((await opened.hasMany(keys(kind, 80))).every(Boolean)).toBe(true)
    await opened.close()
  }
  const other = kind === 'fixed' ? 'counting' : 'fixed'
  await expect(LevelBloomFilter.open(name, { kind: other })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: `${name} holds a ${kind} filter, not a ${other} one (kind: '${other}' was asked for)` })
})

test.each(FOLDER_KINDS)('$kind: in IndexedDB too, a page that vanished is BLOOM_DATA_LOST naming it, never a page of zeros', async (folderKind) => {
  const name = nameOf('lost-page')
  const filter = await LevelBloomFilter.create(name, { capacity: 20_000, errorRate: 0.01, pageBytes: 4096, ...folderKind.create })
  const added = keys('in', 5000)
  await filter.addMany(added)
  await filter.close()
  const reopened = await openKind(name, folderKind)
  expect((await reopened.hasMany(added)).every(Boolean)).toBe(true)
  await reopened.close()
  // Delete one page record behind the filter's back, as a lost write would leave it.
  const { Level } = await import('level')
  const raw = new Level<string, Uint8Array>(name, { valueEncoding: 'view' })
  await raw.open()
  const pages = await raw.keys({ gte: 'p', lt: 'q' }).all()
  await raw.del(pages[0])
  await raw.close()
  const again = await openKind(name, folderKind)
  await expect(again.hasMany(added)).rejects.toMatchObject({ code: 'BLOOM_DATA_LOST', message: expect.stringContaining('page 0 of shard 0 is missing') })
  await again.close()
})
