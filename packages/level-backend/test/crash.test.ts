import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { childBuildForTests } from './support/child-build.js'
import { FOLDER_KINDS, type FolderKind, openKind } from './support/kinds.js'
import { runChild } from './support/run-child.js'
import { tempFolders } from './support/temp-folders.js'

// Child processes run the package transpiled from src/ (see test/support/child-build.ts).
const childEntry = childBuildForTests({ beforeAll, afterAll })
const folders = tempFolders()
afterAll(() => folders.removeAll())

const BATCH_KEYS = 2000

function keysOf(batches: number): string[] {
  const keys: string[] = []
  for (let i = 0; i < batches; i++) for (let j = 0; j < BATCH_KEYS; j++) keys.push(`b${i}:${j}`)
  return keys
}

function lastAdded(lines: string[]): number {
  let last = -1
  for (const line of lines) if (line.startsWith('added ')) last = Math.max(last, Number(line.slice(6)))
  return last
}

/** Reopens the folder in this process and checks every batch the child saw resolve. */
async function checkSurvivors(folder: string, batches: number, folderKind: FolderKind): Promise<void> {
  const filter = await openKind(folder, folderKind)
  try {
    const found = await filter.hasMany(keysOf(batches))
    expect(found.filter((x) => !x).length).toBe(0)
    // Not corrupted: every page and log record passes its checksum when the whole filter is read.
    const count = await filter.estimateCount()
    expect(count).toBeGreaterThanOrEqual(Math.floor(batches * BATCH_KEYS * 0.97))
    let bytes = 0
    for await (const chunk of filter.exportChunks()) bytes += chunk.length
    expect(bytes).toBe(40 + folderKind.payloadBytes(filter.parameters.bits) + 4)
  } finally {
    await filter.close()
  }
}

/**
 * What the child's `load` creates for a kind: a counting filter writes its pages with every batch,
 * so it gets a smaller filter than the plain one's default (2 000 000 keys), for a quick load.
 */
function loadOptions(folderKind: FolderKind, capacity = 100_000): object {
  return folderKind.kind === 'counting' ? { ...folderKind.create, capacity } : folderKind.create
}

describe.each(FOLDER_KINDS)('$kind: SIGKILL in the middle of a long load', (folderKind) => {
  const variants = [
    { name: 'default options', options: {}, killAfter: 40 },
    // Tiny pages, cache and checkpoint threshold: evictions and checkpoints run all the time, so the kill lands in them.
    { name: 'a 256 KiB cache of 4 KiB pages, checkpoint every 64 KiB of log', options: { cacheBytes: 262_144, pageBytes: 4096, checkpointBytes: 65_536 }, killAfter: 25 },
    { name: 'sync mode', options: { sync: true }, killAfter: 15 },
  ]
  for (const { name, options, killAfter } of variants) {
    test(`${name}: every add that resolved before the kill is there after reopening`, async () => {
      const folder = folders.path()
      const child = runChild(childEntry(), 'load', folder, { ...loadOptions(folderKind), ...options, batchKeys: BATCH_KEYS })
      await child.waitFor((line) => line === `added ${killAfter}`)
      child.process.kill('SIGKILL')
      const { signal } = await child.exited
      expect(signal).toBe('SIGKILL')
      expect(child.lines).not.toContain('closed')
      const resolved = lastAdded(child.lines) + 1
      expect(resolved).toBeGreaterThan(killAfter)
      await checkSurvivors(folder, resolved, folderKind)
    })
  }
})

describe.each(FOLDER_KINDS)('$kind: disk full', (folderKind) => {
  test('a write that fails (file size limit, EFBIG) rejects with BLOOM_STORE_UNAVAILABLE and its cause; what resolved survives', async () => {
    const folder = folders.path()
    // 2 MiB per file: LevelDB's log outgrows it after a few dozen batches (of a small counting filter's pages too).
    const child = runChild(childEntry(), 'load', folder, { ...loadOptions(folderKind, 20_000), batchKeys: BATCH_KEYS }, 4096)
    const line = await child.waitFor((l) => l.startsWith('error '), 60_000)
    await child.exited
    const error = JSON.parse(line.slice(6))
    expect(error.code).toBe('BLOOM_STORE_UNAVAILABLE')
    expect(error.message).toContain(folder)
    expect(`${error.message} ${error.cause}`).toMatch(/too large|EFBIG|IO error/i)
    const resolved = lastAdded(child.lines) + 1
    expect(resolved).toBeGreaterThan(5)
    await checkSurvivors(folder, resolved, folderKind)
  })
})

describe.each(FOLDER_KINDS)('$kind: locking', (folderKind) => {
  test('a second process opening the folder gets BLOOM_LOCKED naming the folder; after close it opens', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 1000, errorRate: 0.01, ...folderKind.create })
    try {
      const child = runChild(childEntry(), 'open', folder)
      const line = await child.waitFor((l) => l.startsWith('error ') || l === 'opened')
      const error = JSON.parse(line.slice(6))
      expect(error.code).toBe('BLOOM_LOCKED')
      expect(error.message).toContain(folder)
      await child.exited
      // This process still holds the folder: the failed open in the child did not release it.
      await filter.add('still mine')
      expect(await filter.has('still mine')).toBe(true)
    } finally {
      await filter.close()
    }
    const again = runChild(childEntry(), 'open', folder)
    await again.waitFor((l) => l === 'opened')
    await again.exited
  })

  test('opening a folder this process already holds fails with BLOOM_LOCKED and does not disturb it', async () => {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 1000, errorRate: 0.01, ...folderKind.create })
    try {
      await expect(LevelBloomFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_LOCKED', message: expect.stringContaining(folder) })
      await expect(LevelBloomFilter.create(folder, { capacity: 1000, errorRate: 0.01, ...folderKind.create })).rejects.toMatchObject({ code: 'BLOOM_LOCKED' })
      // The lock is still held: another process is refused.
      const child = runChild(childEntry(), 'open', folder)
      const line = await child.waitFor((l) => l.startsWith('error ') || l === 'opened')
      expect(JSON.parse(line.slice(6)).code).toBe('BLOOM_LOCKED')
      await child.exited
    } finally {
      await filter.close()
    }
  })
})

describe('bounded memory', () => {
  async function fill(capacity: number, cacheBytes: number, keys: number) {
    const child = runChild(childEntry(), 'memory', folders.path(), { capacity, cacheBytes, keys })
    const line = await child.waitFor((l) => l.startsWith('result ') || l.startsWith('error '), 80_000)
    const { stderr } = await child.exited
    expect(line, stderr).toMatch(/^result /)
    const result = JSON.parse(line.slice(7))
    const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
    console.log(`bounded memory: ${(result.bits / 1e6).toFixed(0)} Mbit filter (${mib(result.bits / 8)} MiB), cache ${mib(cacheBytes)} MiB, ` +
      `${keys} keys: RSS ${mib(result.rssBefore)} MiB at start, peak ${mib(result.peak)} MiB`)
    expect(result.missing).toBe(0)
    expect(Math.abs(result.count - keys)).toBeLessThan(keys * 0.02)
    return result as { bits: number; peak: number; rssBefore: number }
  }

  test('400 and 800 Mbit filters with a 16 MiB cache work, and the larger one costs no more memory', async () => {
    const cacheBytes = 16 * 2 ** 20
    // Each batch touches every page, so every page passes through the cache (and is written back) several times.
    const small = await fill(41_800_000, cacheBytes, 50_000)
    const large = await fill(83_600_000, cacheBytes, 50_000)
    expect(small.bits).toBeGreaterThanOrEqual(400e6)
    expect(large.bits).toBeGreaterThanOrEqual(800e6)
    // 48 MiB more bits; were the bits held, the peak would grow by that much.
    expect(large.peak - small.peak).toBeLessThan(((large.bits - small.bits) / 8) * 0.75)
  }, 90_000)
})
