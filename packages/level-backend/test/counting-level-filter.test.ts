import { existsSync } from 'node:fs'
import { afterAll, describe, expect, test } from 'vitest'
import { checkParameters, crc32, snapshotFormat } from '@bloomkit/core/store'
import { CountingLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { withRaw } from './support/raw-level.js'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders('bloomkit-counting-')
afterAll(() => folders.removeAll())

describe('CountingLevelFilter', () => {
  test('counters persist across close and open, and concurrent calls within the process are atomic per key', async () => {
    const location = folders.path()
    const filter = await LevelBloomFilter.create(location, { capacity: 2000, errorRate: 0.01, counting: true, seed: 4 })
    expect(filter).toBeInstanceOf(CountingLevelFilter)
    const kept = Array.from({ length: 300 }, (_, i) => `kept:${i}`)
    const churn = Array.from({ length: 300 }, (_, i) => `churn:${i}`)
    await filter.addMany(kept)
    // Many calls in flight at once: each must see the others' whole effects.
    await Promise.all([...churn.map((key) => filter.add(key)), filter.addMany(churn), ...kept.map((key) => filter.has(key))])
    await Promise.all([...churn.map((key) => filter.remove(key)), filter.removeMany(churn)])
    expect(await filter.hasMany(kept)).toEqual(kept.map(() => true))
    const snapshot = await filter.export()
    await filter.close()
    const again = await CountingLevelFilter.open(location)
    try {
      expect(await again.export()).toEqual(snapshot)
      const only = await CountingMemoryFilter.fromParameters(again.parameters)
      only.addMany(kept)
      expect(Buffer.from(snapshot)).toEqual(Buffer.from(only.export()))
    } finally {
      await again.close()
    }
  })

  test('LevelBloomFilter.open and .import take a counting folder or snapshot as what it is; kind and CountingLevelFilter.open refuse the other kind; counting + growth is refused', async () => {
    const counting = folders.path()
    const made = await CountingLevelFilter.create(counting, { capacity: 100, errorRate: 0.01 })
    await made.add('kept')
    const snapshot = await made.export()
    await made.close()
    // The front door opens whatever create made, so a service that opens a folder by name need not know its kind.
    const opened = await LevelBloomFilter.open(counting)
    try {
      expect(opened).toBeInstanceOf(CountingLevelFilter)
      expect(opened.kind).toBe('counting')
      expect(await opened.has('kept')).toBe(true)
      if (opened.kind === 'counting') expect(await opened.remove('kept')).toBe(true)
    } finally {
      await opened.close()
    }
    await expect(LevelBloomFilter.open(counting, { kind: 'fixed' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/counting filter, not a fixed one/) })
    const viaCounting = await LevelBloomFilter.open(counting, { kind: 'counting' })
    expect(viaCounting).toBeInstanceOf(CountingLevelFilter)
    await viaCounting.close()
    const imported = await LevelBloomFilter.import(folders.path(), snapshot)
    try {
      expect(imported.kind).toBe('counting')
      expect(Buffer.from(await imported.export())).toEqual(Buffer.from(snapshot))
    } finally {
      await imported.close()
    }
    const refused = folders.path()
    await expect(LevelBloomFilter.import(refused, snapshot, { kind: 'fixed' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/counting filter's \(format version 3\)/) })
    await expect(LevelBloomFilter.open(refused)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
    const plain = folders.path()
    await (await LevelBloomFilter.create(plain, { capacity: 100, errorRate: 0.01 })).close()
    await expect(CountingLevelFilter.open(plain)).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/plain filter/) })
    await expect(LevelBloomFilter.open(plain, { kind: 'counting' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringMatching(/fixed filter, not a counting one \(kind: 'counting' was asked for\)/) })
    await expect(LevelBloomFilter.create(folders.path(), { capacity: 100, errorRate: 0.01, counting: true, growth: 2 } as never)).rejects.toMatchObject({ code: 'BLOOM_INVALID_PARAMETER' })
  })

  test('a counter page LevelDB lost is BLOOM_DATA_LOST, never zeros', async () => {
    const location = folders.path()
    const filter = await CountingLevelFilter.fromParameters(location, { bits: 1024, hashes: 3, shards: 1, seed: 1, layout: 'blocked' })
    await filter.add('k')
    await filter.close()
    await withRaw(location, async (db) => {
      for await (const key of db.keys({ gte: 'p', lt: 'q' })) await db.del(key)
    })
    const reopened = await CountingLevelFilter.open(location)
    try {
      await expect(reopened.has('k')).rejects.toMatchObject({ code: 'BLOOM_DATA_LOST' })
    } finally {
      await reopened.close()
    }
  })
})

describe('CountingLevelFilter folders and imports', () => {
  test('a counting folder of format version 1 (unversioned pages, before the first release with counting filters) is refused with BLOOM_UNSUPPORTED_VERSION and a remedy', async () => {
    const location = folders.path()
    // Format 1 as that build wrote it: the counting record (magic "BLKC", version 1) and raw 16 KiB pages under `c` keys.
    const record = new Uint8Array(40)
    const view = new DataView(record.buffer)
    view.setUint32(0, 0x434b4c42, true)
    view.setUint16(4, 1, true)
    snapshotFormat.writeParameterFields(view, checkParameters({ bits: 1024, hashes: 3, shards: 1, seed: 1, layout: 'blocked' }))
    view.setUint32(24, 16 * 1024, true)
    view.setUint32(36, crc32(record.subarray(0, 36)), true)
    await withRaw(location, async (db) => db.batch([{ type: 'put', key: 'counting', value: record }, { type: 'put', key: 'c000000000000', value: new Uint8Array(512) }]))
    for (const open of [() => CountingLevelFilter.open(location), () => LevelBloomFilter.open(location)]) {
      await expect(open()).rejects.toMatchObject({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringMatching(/counting folder format version 1 .*export it with the build that wrote it and import the snapshot/) })
    }
  })

  test('a counting snapshot whose header promises far more than it holds is refused before anything is sized by it, and leaves no folder', async () => {
    // 2 GiB of counters declared, 1000 bytes sent.
    const header = snapshotFormat.encodeCountingHeader({ parameters: checkParameters({ bits: 2 ** 32, hashes: 7, shards: 1, seed: 1, layout: 'blocked' }), items: 0 })
    const whole = new Uint8Array(header.length + 1000)
    whole.set(header)
    const folder = folders.path()
    await expect(LevelBloomFilter.import(folder, whole)).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_SNAPSHOT', message: expect.stringContaining('its header describes 2147483692') })
    expect(existsSync(folder)).toBe(false)
    // Streamed, the length is not known until the end: what the import holds when it asks for more is bounded by what came.
    let grown = Number.NaN
    const before = process.memoryUsage().arrayBuffers
    async function* streamed() {
      yield header
      yield new Uint8Array(1000)
      grown = process.memoryUsage().arrayBuffers - before
    }
    const streamedFolder = folders.path()
    await expect(CountingLevelFilter.import(streamedFolder, streamed())).rejects.toMatchObject({ code: 'BLOOM_CORRUPT_SNAPSHOT', message: expect.stringContaining('truncated') })
    expect(grown).toBeLessThan(64 * 2 ** 20)
    expect(existsSync(streamedFolder)).toBe(false)
  })
})
