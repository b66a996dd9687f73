import { existsSync } from 'node:fs'
import { afterAll, describe, expect, test } from 'vitest'
import { Level } from 'level'
import { snapshotFormat } from '@bloomkit/core/store'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { tempFolders } from './support/temp-folders.js'

const { encodeSnapshotHeader } = snapshotFormat

const folders = tempFolders()
afterAll(() => folders.removeAll())

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length))

/** Splits bytes into chunks of `size`, as a file stream would deliver them. */
async function* inChunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size)
}

describe('snapshots', () => {
  // 3 shards whose size is not a multiple of the 1 KiB page, so the last page of each shard is short.
  const sizing = { capacity: 20_000, errorRate: 0.01, shards: 3, seed: 99 }
  // Store options apart: the memory filters are refused options they do not take.
  const options = { ...sizing, pageBytes: 1024, cacheBytes: 8192 }

  test('LevelDB → memory → LevelDB, bit for bit', async () => {
    const level = await LevelBloomFilter.create(folders.path(), options)
    await level.addMany(keys('one', 8000))
    const fromLevel = await level.export()
    const memory = await MemoryBloomFilter.import(fromLevel)
    expect(same(memory.export(), fromLevel)).toBe(true)
    expect(memory.hasMany(keys('one', 8000)).every(Boolean)).toBe(true)

    memory.addMany(keys('two', 5000))
    const fromMemory = memory.export()
    // Streamed from the memory filter's exportChunks, never as one buffer.
    const back = await LevelBloomFilter.import(folders.path(), memory.exportChunks(), { kind: 'fixed', pageBytes: 1024 })
    expect(same(await back.export(), fromMemory)).toBe(true)
    expect((await back.hasMany([...keys('one', 8000), ...keys('two', 5000)])).every(Boolean)).toBe(true)
    expect(back.parameters).toEqual(level.parameters)
    await level.close()
    await back.close()
  })

  test('import from small chunks equals import from one buffer, survives reopen, and writes no all-zero page', async () => {
    const source = await MemoryBloomFilter.create(sizing)
    source.addMany(keys('few', 20))
    const snapshot = source.export()
    const folder = folders.path()
    const imported = await LevelBloomFilter.import(folder, inChunks(snapshot, 7), { kind: 'fixed', pageBytes: 1024 })
    await imported.close()
    const db = new Level<string, Uint8Array>(folder, { valueEncoding: 'view' })
    const pages = (await db.keys({ gte: 'p', lt: 'q' }).all()).length
    await db.close()
    expect(pages).toBeGreaterThan(0)
    expect(pages).toBeLessThanOrEqual(20 * source.parameters.hashes)
    const reopened = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(same(await reopened.export(), snapshot)).toBe(true)
    await reopened.close()
  })

  test('a snapshot with a flipped bit, or cut short, never yields a filter and leaves no folder', async () => {
    const source = await MemoryBloomFilter.create(sizing)
    source.addMany(keys('x', 1000))
    const good = source.export()
    const flipped = good.slice()
    flipped[good.length - 100] ^= 1
    for (const [name, bad] of [['flipped', flipped], ['truncated', good.slice(0, good.length - 10)], ['trailing', Uint8Array.from([...good, 0])]] as const) {
      const folder = folders.path(name)
      await expect(LevelBloomFilter.import(folder, inChunks(bad, 1000))).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_SNAPSHOT' })
      expect(existsSync(folder)).toBe(false)
      await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
    }
  })

  test('a streamed import that goes on past what its header declared is refused at once: the source is not read further, no folder is left', async () => {
    const source = await MemoryBloomFilter.create(sizing)
    source.addMany(keys('y', 1000))
    const good = source.export()
    let extra = 0
    async function* endless(): AsyncGenerator<Uint8Array> {
      yield* inChunks(good, 4096)
      // Bounded, so that code which checks the length only at the end fails here instead of hanging.
      while (extra < 1000) {
        extra++
        yield new Uint8Array(4096)
      }
    }
    const folder = folders.path('endless')
    await expect(LevelBloomFilter.import(folder, endless())).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_SNAPSHOT' })
    expect(extra).toBe(1)
    expect(existsSync(folder)).toBe(false)
  })

  test('import of a filter with more pages than the page tables allow is refused from its header, writing nothing', async () => {
    const header = encodeSnapshotHeader({ parameters: { bits: 2 ** 38, hashes: 7, shards: 64, seed: 0, layout: 'classic', scheme: 3 }, items: 0 })
    const folder = folders.path('huge')
    await expect(LevelBloomFilter.import(folder, [header, new Uint8Array(1000)], { pageBytes: 1024 })).rejects.toMatchObject({
      code: 'BLOOM_INVALID_PARAMETER',
      message: expect.stringContaining('pageBytes'),
    })
    expect(existsSync(folder)).toBe(false)
  })

  test('import into a folder that holds a filter is refused and leaves that filter as it was', async () => {
    const folder = folders.path()
    const existing = await LevelBloomFilter.create(folder, options)
    await existing.add('mine')
    await existing.close()
    const other = await MemoryBloomFilter.create(sizing)
    await expect(LevelBloomFilter.import(folder, other.export())).rejects.toMatchObject({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringContaining(folder) })
    const reopened = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(await reopened.has('mine')).toBe(true)
    await reopened.close()
  })

  test('merge: a LevelDB filter takes in a memory filter and the other way round', async () => {
    const level = await LevelBloomFilter.create(folders.path(), options)
    const memory = await MemoryBloomFilter.create(sizing)
    await level.addMany(keys('l', 3000))
    memory.addMany(keys('m', 3000))
    await level.merge(memory)
    expect((await level.hasMany([...keys('l', 3000), ...keys('m', 3000)])).every(Boolean)).toBe(true)
    const fresh = await MemoryBloomFilter.create(sizing)
    await fresh.merge(level)
    expect(same(fresh.export(), await level.export())).toBe(true)
    expect(Math.abs((await level.estimateCount()) - 6000)).toBeLessThan(150)
    const other = await MemoryBloomFilter.create({ ...sizing, seed: 1 })
    await expect(level.merge(other)).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
    await level.close()
  })

  test('clear empties the filter on disk too', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, options)
    await filter.addMany(keys('c', 2000))
    await filter.clear()
    expect(await filter.estimateCount()).toBe(0)
    expect((await filter.hasMany(keys('c', 2000))).some(Boolean)).toBe(false)
    await filter.close()
    const reopened = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(await reopened.estimateCount()).toBe(0)
    await reopened.close()
  })
})
