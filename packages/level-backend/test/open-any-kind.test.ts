import { appendFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { CountingLevelFilter, LayeredLevelFilter, LevelBloomFilter, type LevelFilterKind } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { withRaw } from './support/raw-level.js'
import { tempFolders } from './support/temp-folders.js'

// One front door (issue 21): a service that opens a folder by name need not know whether `create`
// made a fixed or a layered filter there; `kind` tells them apart, or insists on one.

const folders = tempFolders('bloomkit-any-kind-')
afterAll(() => folders.removeAll())

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

async function* inChunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

describe('LevelBloomFilter.open opens whatever create made', () => {
  test('a scalable and a rotating folder open as LayeredLevelFilter (kind layered) with their keys, a fixed one as LevelBloomFilter (kind fixed)', async () => {
    const scalable = folders.path()
    const grown = await LevelBloomFilter.create(scalable, { capacity: 50, errorRate: 0.01, growth: 2 })
    await grown.addMany(keys('s', 200))
    await grown.close()
    const now = 1_000_000_000
    const rotating = folders.path()
    const windowed = await LevelBloomFilter.create(rotating, { capacity: 100, errorRate: 0.01, window: { seconds: 60, keep: 3 }, clock: () => now })
    await windowed.addMany(keys('r', 50))
    await windowed.close()
    const fixedFolder = folders.path()
    const plain = await LevelBloomFilter.create(fixedFolder, { capacity: 100, errorRate: 0.01 })
    await plain.addMany(keys('f', 50))
    await plain.close()

    const a = await LevelBloomFilter.open(scalable)
    expect(a.kind).toBe('layered')
    expect(a).toBeInstanceOf(LayeredLevelFilter)
    expect((await a.hasMany(keys('s', 200))).every(Boolean)).toBe(true)
    if (a.kind === 'layered') expect((await a.layers()).length).toBeGreaterThan(1)
    await a.close()

    const b = await LevelBloomFilter.open(rotating, { clock: () => now + 1000 })
    expect(b.kind).toBe('layered')
    expect((await b.hasMany(keys('r', 50))).every(Boolean)).toBe(true)
    await b.close()

    const c = await LevelBloomFilter.open(fixedFolder)
    expect(c.kind).toBe('fixed')
    expect(c).toBeInstanceOf(LevelBloomFilter)
    expect((await c.hasMany(keys('f', 50))).every(Boolean)).toBe(true)
    await c.close()
  })

  test('kind insists on one: the other kind is BLOOM_INCOMPATIBLE naming what the folder holds; a bad kind is BLOOM_INVALID_PARAMETER', async () => {
    const layered = folders.path()
    await (await LevelBloomFilter.create(layered, { capacity: 10, errorRate: 0.01, growth: 2 })).close()
    const fixed = folders.path()
    await (await LevelBloomFilter.create(fixed, { capacity: 10, errorRate: 0.01 })).close()
    await expect(LevelBloomFilter.open(layered, { kind: 'fixed' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining('holds a layered filter') })
    // As on Redis (issue 33 item 17: it was BLOOM_NOT_FOUND, "use LevelBloomFilter.open", the call just made).
    await expect(LevelBloomFilter.open(fixed, { kind: 'layered' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining("holds a fixed filter, not a layered one (kind: 'layered' was asked for)") })
    await expect(LevelBloomFilter.open(fixed, { kind: 'sliding' as never })).rejects.toMatchObject({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringContaining('kind') })
    // Both still open afterwards: a refused open leaves the folder as it was, and unlocked.
    const one = await LevelBloomFilter.open(layered, { kind: 'layered' })
    expect(one).toBeInstanceOf(LayeredLevelFilter)
    await one.close()
    const two = await LevelBloomFilter.open(fixed, { kind: 'fixed' })
    expect(two).toBeInstanceOf(LevelBloomFilter)
    await two.close()
  })

  test('a missing folder is still BLOOM_NOT_FOUND, and a counting folder opens as a CountingLevelFilter', async () => {
    await expect(LevelBloomFilter.open(folders.path())).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
    await expect(LevelBloomFilter.open(folders.path(), { kind: 'counting' })).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
    const counting = folders.path()
    await (await LevelBloomFilter.create(counting, { capacity: 10, errorRate: 0.01, counting: true })).close()
    const opened = await LevelBloomFilter.open(counting)
    expect(opened.kind).toBe('counting')
    await opened.close()
  })
})

/**
 * How many times LevelDB opened the database in `database` while `run` ran. LevelDB renames the
 * database's info log, LOG, to LOG.old each time it opens it: a line written into LOG before is
 * still there after no open, in LOG.old after one, and gone after two or more.
 */
async function levelDbOpens(database: string, run: () => Promise<unknown>): Promise<'none' | 'once' | 'more than once'> {
  const marker = `bloomkit-test-marker ${Math.random()}\n`
  appendFileSync(join(database, 'LOG'), marker)
  await run()
  const holds = (file: string) => readFileSync(join(database, file), 'utf8').includes(marker)
  return holds('LOG') ? 'none' : holds('LOG.old') ? 'once' : 'more than once'
}

describe('LevelBloomFilter.open reads the stored kind once, then opens that kind (issue 34 item 1)', () => {
  const made = async (kind: LevelFilterKind) => {
    const folder = folders.path()
    const options = { capacity: 100, errorRate: 0.01, ...(kind === 'layered' ? { growth: 2 } : kind === 'counting' ? { counting: true as const } : {}) }
    const filter = await LevelBloomFilter.create(folder, options)
    await filter.addMany(keys(kind, 20))
    await filter.close()
    // A layered filter's folder is not a database: its manifest is (each layer has one of its own).
    return { folder, database: kind === 'layered' ? join(folder, 'manifest') : folder }
  }
  const classOf = { fixed: LevelBloomFilter, layered: LayeredLevelFilter, counting: CountingLevelFilter }

  test.each(['fixed', 'layered', 'counting'] as const)('a %s folder, asked for any kind or its own, is opened by LevelDB once and answers', async (kind) => {
    const { folder, database } = await made(kind)
    for (const asked of [undefined, kind]) {
      let opened: Awaited<ReturnType<typeof LevelBloomFilter.open>> | undefined
      expect(await levelDbOpens(database, async () => (opened = await LevelBloomFilter.open(folder, { kind: asked })))).toBe('once')
      try {
        expect(opened).toBeInstanceOf(classOf[kind])
        expect(opened!.kind).toBe(kind)
        expect((await opened!.hasMany(keys(kind, 20))).every(Boolean)).toBe(true)
      } finally {
        await opened!.close()
      }
    }
  })

  test.each([
    ['fixed', 'layered'],
    ['fixed', 'counting'],
    ['counting', 'fixed'],
    ['counting', 'layered'],
    ['layered', 'fixed'],
    ['layered', 'counting'],
  ] as const)('a %s folder asked for kind %s: BLOOM_INCOMPATIBLE naming both, after one open, and the folder opens afterwards', async (kind, asked) => {
    const { folder, database } = await made(kind)
    let refusal: unknown
    expect(await levelDbOpens(database, async () => (refusal = await LevelBloomFilter.open(folder, { kind: asked }).catch((error: unknown) => error)))).toBe('once')
    expect(refusal).toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: `${folder} holds a ${kind} filter, not a ${asked} one (kind: '${asked}' was asked for)` })
    const again = await LevelBloomFilter.open(folder, { kind })
    await again.close()
  })
})

test('a layered filter open in this process is BLOOM_LOCKED for an open of any kind (was BLOOM_CORRUPT_STORE, "not a LevelDB folder"), as a fixed one is', async () => {
  for (const extra of [{ growth: 2 }, {}]) {
    const folder = folders.path()
    const held = await LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.01, ...extra })
    try {
      await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_LOCKED' })
    } finally {
      await held.close()
    }
  }
})

test('a folder whose layered manifest database is empty (a create a crash cut short) is BLOOM_NOT_FOUND for any kind asked, not "holds a layered filter"', async () => {
  const folder = folders.path()
  await withRaw(join(folder, 'manifest'), async () => {})
  for (const kind of [undefined, 'fixed', 'layered', 'counting'] as const) {
    await expect(LevelBloomFilter.open(folder, { kind })).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND', message: `${folder}: no bloomkit filter here (its layered manifest is empty)` })
  }
  // And create makes the filter there, as before.
  const made = await LevelBloomFilter.create(folder, { capacity: 100, errorRate: 0.01, growth: 2 })
  await made.close()
  const opened = await LevelBloomFilter.open(folder)
  expect(opened.kind).toBe('layered')
  await opened.close()
})

describe('LevelBloomFilter.import imports whatever export made', () => {
  test('a layered snapshot, whole or in chunks, becomes a LayeredLevelFilter with the same layers and answers; a fixed one a LevelBloomFilter', async () => {
    const memory = LayeredMemoryFilter.createSync({ capacity: 40, errorRate: 0.01, growth: 2, seed: 7 }) as LayeredMemoryFilter
    memory.addMany(keys('k', 300))
    const snapshot = memory.export()
    const probes = [...keys('k', 300), ...keys('absent', 2000)]
    for (const source of [snapshot, inChunks(snapshot, 13)]) {
      const imported = await LevelBloomFilter.import(folders.path(), source)
      expect(imported.kind).toBe('layered')
      expect(imported).toBeInstanceOf(LayeredLevelFilter)
      expect(await imported.hasMany(probes)).toEqual(memory.hasMany(probes))
      expect(await imported.export()).toEqual(snapshot)
      await imported.close()
    }
    const fixed = await MemoryBloomFilter.fromParameters({ bits: 4096, hashes: 5, shards: 1, seed: 3 })
    fixed.addMany(keys('f', 100))
    const plain = await LevelBloomFilter.import(folders.path(), inChunks(fixed.export(), 5))
    expect(plain.kind).toBe('fixed')
    expect(new Uint8Array(await (plain as LevelBloomFilter).export())).toEqual(fixed.export())
    await plain.close()
  })

  test('kind insists on one: the other snapshot kind is BLOOM_INCOMPATIBLE and nothing is written', async () => {
    const layered = (LayeredMemoryFilter.createSync({ capacity: 10, errorRate: 0.01, growth: 2, seed: 1 }) as LayeredMemoryFilter).export()
    const fixed = (await MemoryBloomFilter.fromParameters({ bits: 1024, hashes: 3, shards: 1, seed: 1 })).export()
    const a = folders.path()
    await expect(LevelBloomFilter.import(a, layered, { kind: 'fixed' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining('layered') })
    await expect(LevelBloomFilter.open(a)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
    const b = folders.path()
    await expect(LevelBloomFilter.import(b, inChunks(fixed, 3), { kind: 'layered' })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining('format version 1') })
    await expect(LevelBloomFilter.open(b)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
  })
})
