import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { BloomError, sizeFilter } from '@bloomkit/core'
import { LevelBitStore, LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { withRaw } from './support/raw-level.js'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

describe('create and open', () => {
  test('open reads the parameters from the folder; keys added before close are there', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 10_000, errorRate: 0.01, seed: 7, shards: 3 })
    expect(filter.parameters).toEqual(sizeFilter({ capacity: 10_000, errorRate: 0.01, seed: 7, shards: 3 }))
    expect(await filter.addMany(keys('a', 5000))).toEqual(Array(5000).fill(true))
    await filter.close()
    const again = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(again.parameters).toEqual(filter.parameters)
    expect((await again.hasMany(keys('a', 5000))).every(Boolean)).toBe(true)
    expect(await again.has('absent')).toBe(false)
    expect(Math.abs((await again.estimateCount()) - 5000)).toBeLessThan(100)
    await again.close()
  })

  test('create on a folder holding a filter with other parameters fails with BLOOM_INCOMPATIBLE and leaves it intact', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 1000, errorRate: 0.01 })
    await filter.add('kept')
    await filter.close()
    const error = await LevelBloomFilter.create(folder, { capacity: 2000, errorRate: 0.01 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BloomError)
    expect(error).toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining(folder) })
    // No seed was given (the folder's would be kept): the seeds are not what differs (issue 37 item 2).
    expect((error as Error).message).not.toContain('seed')
    expect((error as Error).message).toMatch(/; open it, or use another folder$/)
    // A seed given that is not the folder's is named as a difference.
    const seeded = await LevelBloomFilter.create(folder, { capacity: 1000, errorRate: 0.01, seed: 12345 }).catch((e: unknown) => e)
    expect(seeded).toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining('; the seeds differ') })
    const same = await LevelBloomFilter.create(folder, { capacity: 1000, errorRate: 0.01 })
    expect(await same.has('kept')).toBe(true)
    await same.close()
  })

  test('create with another bit layout (all else equal) fails with BLOOM_INCOMPATIBLE naming both layouts', async () => {
    const folder = folders.path()
    const classic = { bits: 65_536, hashes: 7, shards: 1, seed: 0, layout: 'classic' } as const
    const store = await LevelBitStore.create(folder, classic)
    await store.close()
    const error = await LevelBitStore.create(folder, { ...classic, layout: 'blocked' }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/layout=classic.*layout=blocked/) })
    const again = await LevelBitStore.create(folder, classic)
    expect(again.parameters).toEqual({ ...classic, scheme: 3 })
    await again.close()
  })

  test('the package exports only its public names', async () => {
    expect(Object.keys(await import('@bloomkit/level-backend')).sort()).toEqual(['BloomError', 'CountingLevelFilter', 'LayeredLevelFilter', 'LevelBitStore', 'LevelBloomFilter', 'isBloomError', 'optimalParameters', 'sizeFilter'])
  })

  test('open of a missing folder fails with BLOOM_NOT_FOUND and creates nothing', async () => {
    const folder = folders.path('missing')
    await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND', message: expect.stringContaining(folder) })
    await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
  })

  test('a LevelDB folder of another application is BLOOM_CORRUPT_STORE for open and create, and is left alone', async () => {
    const folder = folders.path()
    await withRaw(folder, (db) => db.put('user:1', Uint8Array.of(1)))
    await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE', message: expect.stringContaining('not a bloomkit filter') })
    await expect(LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.1 })).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE' })
    const left = await withRaw(folder, async (db) => (await db.keys().all()))
    expect(left).toEqual(['user:1'])
  })

  test('a folder of other files is BLOOM_CORRUPT_STORE; LevelDB never writes into it', async () => {
    const folder = folders.make()
    writeFileSync(join(folder, 'notes.txt'), 'hello')
    await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE' })
    await expect(LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.1 })).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE' })
    expect(execFileSync('ls', [folder]).toString().trim()).toBe('notes.txt')
  })

  test('a location that cannot be a folder fails with BLOOM_STORE_UNAVAILABLE carrying the I/O error', async () => {
    const parent = folders.make()
    writeFileSync(join(parent, 'file'), 'x')
    const error = await LevelBloomFilter.create(join(parent, 'file', 'filter'), { capacity: 100, errorRate: 0.1 }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'BLOOM_STORE_UNAVAILABLE' })
    expect((error as BloomError).cause).toBeDefined()
  })

  test('bad options name the option and its range', async () => {
    const folder = folders.path()
    await expect(LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.1, pageBytes: 1000 })).rejects.toMatchObject({
      code: 'BLOOM_INVALID_PARAMETER',
      message: expect.stringMatching(/pageBytes must be a power of two from 1024 to 1048576/),
    })
    await expect(LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.1, cacheBytes: -1 })).rejects.toMatchObject({ message: expect.stringContaining('cacheBytes') })
    await expect(LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.1, sync: 'yes' as never })).rejects.toMatchObject({ message: expect.stringContaining('sync') })
    await expect(LevelBloomFilter.create(folder, { capacity: 0, errorRate: 0.1 })).rejects.toMatchObject({ code: 'BLOOM_INVALID_PARAMETER' })
    expect(execFileSync('ls', [join(folder, '..')]).toString().trim()).toBe('')
  })

  test('a closed filter rejects with BLOOM_CLOSED; close is idempotent', async () => {
    const filter = await LevelBloomFilter.create(folders.path(), { capacity: 100, errorRate: 0.1 })
    await filter.close()
    await filter.close()
    await expect(filter.add('x')).rejects.toMatchObject({ code: 'BLOOM_CLOSED' })
    await expect(filter.hasMany(['x'])).rejects.toMatchObject({ code: 'BLOOM_CLOSED' })
    await expect(filter.flush()).rejects.toMatchObject({ code: 'BLOOM_CLOSED' })
  })
})

describe('folder format', () => {
  test('untouched pages are never written: a fresh 1 GiB filter with 10 keys takes under 1 % of that on disk', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 900_000_000, errorRate: 0.01 })
    expect(filter.parameters.bits / 8).toBeGreaterThan(2 ** 30)
    await filter.addMany(keys('few', 10))
    await filter.close()
    const kib = Number(execFileSync('du', ['-sk', folder]).toString().split('\t')[0])
    console.log(`fresh ${(filter.parameters.bits / 8 / 2 ** 30).toFixed(2)} GiB filter with 10 keys: ${kib} KiB on disk`)
    const pages = await withRaw(folder, async (db) => (await db.keys({ gte: 'p', lt: 'q' }).all()).length)
    expect(pages).toBeGreaterThan(0)
    expect(pages).toBeLessThanOrEqual(10 * filter.parameters.hashes)
    // The touched pages (16 KiB each by default, in LevelDB's log until it compacts them) and little else.
    expect(kib * 1024).toBeLessThan(pages * filter.bitStore.pageBytes * 1.2 + 2 ** 20)
    expect(kib * 1024).toBeLessThan(filter.parameters.bits / 8 / 100)
  })

  test('a page that fails its checksum is BLOOM_CORRUPT_STORE naming the page, never a false "absent"', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 10_000, errorRate: 0.01, pageBytes: 1024 })
    await filter.addMany(keys('k', 1000))
    await filter.close()
    const damaged = await withRaw(folder, async (db) => {
      const [key, value] = (await db.iterator({ gte: 'p', lt: 'q', limit: 1 }).all())[0]
      const copy = Uint8Array.from(value)
      copy[10] ^= 0x40
      await db.put(key, copy)
      return key
    })
    const again = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    const error = await again.hasMany(keys('k', 1000)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'BLOOM_CORRUPT_STORE', message: expect.stringMatching(/page \d+ of shard \d+ fails its CRC-32 check/) })
    expect(damaged).toMatch(/^p/)
    await expect(again.export()).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE' })
    await again.close()
  })

  test('metadata that fails its checksum, or is not ours, is BLOOM_CORRUPT_STORE', async () => {
    const folder = folders.path()
    await (await LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.01 })).close()
    await withRaw(folder, async (db) => {
      const meta = Uint8Array.from((await db.get('meta'))!)
      meta[12] ^= 1
      await db.put('meta', meta)
    })
    await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE', message: expect.stringContaining('metadata record fails its CRC-32') })
    await withRaw(folder, (db) => db.put('meta', new TextEncoder().encode('{"hello":1}')))
    await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE', message: expect.stringContaining('not a bloomkit filter') })
  })

  test('a resolved addMany is in the log before any page is written; open replays it', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 10_000, errorRate: 0.01 })
    await filter.addMany(keys('logged', 3000))
    // Look at the folder while the filter is open would break LevelDB's lock; instead compare with a copy.
    const copy = folders.path('copy')
    mkdirSync(copy)
    execFileSync('cp', ['-r', `${folder}/.`, copy])
    await filter.close()
    await withRaw(copy, async (db) => {
      expect((await db.keys({ gte: 'l', lt: 'm' }).all()).length).toBe(1)
      expect((await db.keys({ gte: 'p', lt: 'q' }).all()).length).toBe(0)
    })
    const replayed = await LevelBloomFilter.open(copy, { kind: 'fixed' })
    expect((await replayed.hasMany(keys('logged', 3000))).every(Boolean)).toBe(true)
    await replayed.close()
    await withRaw(copy, async (db) => expect((await db.keys({ gte: 'l', lt: 'm' }).all()).length).toBe(0))

    // The same log record, damaged: open refuses the folder rather than dropping the keys.
    const damaged = folders.path('damaged')
    mkdirSync(damaged)
    const again = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    await again.addMany(keys('second', 100))
    execFileSync('cp', ['-r', `${folder}/.`, damaged])
    await again.close()
    await withRaw(damaged, async (db) => {
      const [key, value] = (await db.iterator({ gte: 'l', lt: 'm' }).all())[0]
      const copy = Uint8Array.from(value)
      copy[20] ^= 0x01
      await db.put(key, copy)
    })
    await expect(LevelBloomFilter.open(damaged)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE', message: expect.stringMatching(/log record \d+ fails its CRC-32 check/) })
  })
})

describe('set-bit counts', () => {
  // One fixed seed, so that the memory filters it is compared with place keys alike.
  const sizing = { capacity: 10_000, errorRate: 0.01, seed: 11 }
  // Store options apart: the memory filters are refused options they do not take.
  const options = { ...sizing, pageBytes: 1024, cacheBytes: 4096 }

  test('after a clean close, estimateCount comes from the stored counts, without reading pages', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, options)
    await filter.addMany(keys('c', 3000))
    const before = await filter.estimateCount()
    await filter.close()
    await withRaw(folder, async (db) => {
      const [key, value] = (await db.iterator({ gte: 'p', lt: 'q', limit: 1 }).all())[0]
      const copy = Uint8Array.from(value)
      copy[0] ^= 1
      await db.put(key, copy)
    })
    const again = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(await again.estimateCount()).toBe(before)
    // The damaged page is still caught when it is read.
    await expect(again.hasMany(keys('c', 3000))).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_STORE' })
    await again.close()
  })

  test('stored counts are not trusted when a log is left to replay: pages evicted after them already hold replayed bits', async () => {
    const folder = folders.path()
    const reference = await MemoryBloomFilter.create(sizing)
    const first = await LevelBloomFilter.create(folder, options)
    await first.addMany(keys('a', 2000))
    reference.addMany(keys('a', 2000))
    await first.close()
    const second = await LevelBloomFilter.open(folder, { kind: 'fixed', cacheBytes: 4096 })
    await second.addMany(keys('b', 3000))
    reference.addMany(keys('b', 3000))
    // A copy while open is what a crash leaves: the counts of the first close, a log, pages with some of its bits.
    const copy = folders.path('crashed')
    mkdirSync(copy)
    execFileSync('cp', ['-r', `${folder}/.`, copy])
    await second.close()
    const reopened = await LevelBloomFilter.open(copy, { kind: 'fixed' })
    expect(await reopened.estimateCount()).toBe(reference.estimateCount())
    await reopened.close()
  })

  test('after merge, clear and import the counts stay exact across reopening', async () => {
    const folder = folders.path()
    const reference = await MemoryBloomFilter.create(sizing)
    const filter = await LevelBloomFilter.create(folder, options)
    await filter.addMany(keys('x', 1000))
    reference.addMany(keys('x', 1000))
    const other = await MemoryBloomFilter.create(sizing)
    other.addMany(keys('y', 1500))
    reference.merge(other)
    await filter.merge(other)
    await filter.close()
    const merged = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(await merged.estimateCount()).toBe(reference.estimateCount())
    await merged.clear()
    await merged.close()
    const cleared = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(await cleared.estimateCount()).toBe(0)
    await cleared.close()
    const imported = await LevelBloomFilter.import(folders.path(), reference.export(), { kind: 'fixed', pageBytes: 1024 })
    expect(await imported.estimateCount()).toBe(reference.estimateCount())
    await imported.close()
  })
})

describe('concurrency', () => {
  test('concurrent addMany calls lose no bit: the bits equal those of the same keys in a memory filter', async () => {
    const sizing = { capacity: 50_000, errorRate: 0.01, seed: 11 }
    // A small cache of small pages, so calls interleave across page loads and evictions; and the
    // default cache, which holds the whole filter and, once every page is loaded, indexes it directly.
    const evicting = await LevelBloomFilter.create(folders.path(), { ...sizing, pageBytes: 1024, cacheBytes: 8192 })
    const holding = await LevelBloomFilter.create(folders.path(), sizing)
    const reference = await MemoryBloomFilter.create(sizing)
    const groups = Array.from({ length: 12 }, (_, g) => keys(`g${g}`, 2500))
    // Every page loaded and written: the holding filter goes on with clean pages in direct mode.
    await holding.addMany(keys('warm', 20_000))
    await holding.flush()
    await evicting.addMany(keys('warm', 20_000))
    reference.addMany(keys('warm', 20_000))
    await Promise.all(groups.flatMap((group) => [evicting.addMany(group), holding.addMany(group)]))
    for (const group of groups) reference.addMany(group)
    const expected = Buffer.from(reference.export())
    for (const filter of [evicting, holding]) {
      expect((await filter.hasMany(groups.flat())).every(Boolean)).toBe(true)
      expect(Buffer.from(await filter.export()).equals(expected)).toBe(true)
      // And again after a reopen, from the pages and log on disk.
      const folder = filter.location
      await filter.close()
      const reopened = await LevelBloomFilter.open(folder, { kind: 'fixed' })
      expect(Buffer.from(await reopened.export()).equals(expected)).toBe(true)
      await reopened.close()
    }
  })
})
