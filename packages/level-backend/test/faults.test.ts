import { cpSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { childBuildForTests } from './support/child-build.js'
import { FOLDER_KINDS, type FolderKind, openKind } from './support/kinds.js'
import { runChild } from './support/run-child.js'
import { withRaw } from './support/raw-level.js'
import { tempFolders } from './support/temp-folders.js'

// Damage as a bad copy, a full disk or a failing disk leaves it, done to real LevelDB folders.
// Every case asserts the one promise: opening and reading the filter either finds every key whose
// add resolved, or fails with a coded BloomError naming the folder. Never "absent" for a key held.
// Each runs on a plain filter's folder and on a counting filter's (the same checks guard both).

const folders = tempFolders()
const childEntry = childBuildForTests({ beforeAll, afterAll })
afterAll(() => folders.removeAll())

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)
const DAMAGE_CODES = ['BLOOM_CORRUPT_STORE', 'BLOOM_DATA_LOST', 'BLOOM_STORE_UNAVAILABLE']

type Outcome = { error: BloomError } | { missing: number }

/** Opens the folder, asks for every key and reads every page; the error, or how many keys read absent. */
async function outcome(folder: string, added: readonly string[], folderKind: FolderKind): Promise<Outcome> {
  try {
    const filter = await openKind(folder, folderKind)
    try {
      const found = await filter.hasMany(added)
      for await (const chunk of filter.exportChunks()) expect(chunk.length).toBeGreaterThan(0)
      await filter.estimateCount()
      return { missing: found.filter((x) => !x).length }
    } finally {
      await filter.close().catch(() => {})
    }
  } catch (error) {
    if (!(error instanceof BloomError)) throw error
    return { error }
  }
}

/** "A coded error or every key present", with the case named in the failure. */
function expectNoSilentLoss(result: Outcome, folder: string, what: string): void {
  if ('error' in result) {
    expect(DAMAGE_CODES, `${what}: ${result.error.code} ${result.error.message}`).toContain(result.error.code)
    expect(result.error.message, what).toContain(folder)
  } else {
    expect(result.missing, `${what}: keys read absent without an error`).toBe(0)
  }
}

/** The folder's files ending in `suffix`, largest number last. */
function filesOf(folder: string, suffix: string): string[] {
  return readdirSync(folder).filter((name) => name.endsWith(suffix)).sort().map((name) => join(folder, name))
}

function flipBytes(file: string, at: number): void {
  const bytes = readFileSync(file)
  const i = Math.min(Math.max(0, at), bytes.length - 2)
  bytes[i] ^= 0xff
  bytes[i + 1] ^= 0xff
  writeFileSync(file, bytes)
}

describe.each(FOLDER_KINDS)('$kind: damaged LevelDB files', (folderKind) => {
  // 200 000 keys in batches of 10 000: about 6 MiB of log records, more than LevelDB's 4 MiB
  // memtable, so the folder has both a .ldb table and a .log holding the newest writes.
  const added = keys('k', 200_000)
  let source: string
  beforeAll(async () => {
    source = folders.path()
    const filter = await LevelBloomFilter.create(source, { capacity: 200_000, errorRate: 0.01, ...folderKind.create })
    for (let i = 0; i < added.length; i += 10_000) await filter.addMany(added.slice(i, i + 10_000))
    await filter.close()
    expect(filesOf(source, '.log').length).toBeGreaterThan(0)
    expect(filesOf(source, '.ldb').length).toBeGreaterThan(0)
  }, 60_000)

  function damaged(damage: (folder: string) => void): string {
    const folder = folders.path()
    cpSync(source, folder, { recursive: true })
    damage(folder)
    return folder
  }

  const cases: [string, string, (file: string) => void][] = [
    ['.log', 'two bytes flipped at its end', (file) => flipBytes(file, statSync(file).size - 3)],
    ['.log', 'two bytes flipped a third of the way in', (file) => flipBytes(file, Math.floor(statSync(file).size / 3))],
    ['.log', 'two bytes flipped two thirds of the way in', (file) => flipBytes(file, Math.floor((statSync(file).size * 2) / 3))],
    ['.log', 'deleted', (file) => rmSync(file)],
    ['.log', 'cut in half', (file) => truncateSync(file, Math.floor(statSync(file).size / 2))],
    ['.ldb', 'deleted', (file) => rmSync(file)],
    ['.ldb', 'cut in half', (file) => truncateSync(file, Math.floor(statSync(file).size / 2))],
    ...[0.05, 0.25, 0.5, 0.75, 0.95, 0.999].map(
      (at) => ['.ldb', `two bytes flipped at ${at * 100} % of it`, (file: string) => flipBytes(file, Math.floor(statSync(file).size * at))] as [string, string, (file: string) => void],
    ),
  ]

  test.each(['.log', '.ldb'])('the newest %s file flipped, deleted or cut in half: a coded error or every key present', async (suffix) => {
    for (const [kind, what, damage] of cases) {
      if (kind !== suffix) continue
      const folder = damaged((f) => damage(filesOf(f, suffix).at(-1)!))
      expectNoSilentLoss(await outcome(folder, added, folderKind), folder, `${suffix} ${what}`)
    }
  }, 60_000)
})

describe.each(FOLDER_KINDS)('$kind: any damage to any file (property)', (folderKind) => {
  // As above: more log records than LevelDB's 4 MiB memtable, so there is a .ldb table and a .log.
  const added = keys('p', 200_000)
  let source: string
  beforeAll(async () => {
    source = folders.path()
    const filter = await LevelBloomFilter.create(source, { capacity: 200_000, errorRate: 0.01, ...folderKind.create })
    for (let i = 0; i < added.length; i += 10_000) await filter.addMany(added.slice(i, i + 10_000))
    await filter.close()
  }, 60_000)

  test('whatever file is flipped, cut or deleted, and wherever: a coded error, never a key read absent', async () => {
    const files = readdirSync(source).filter((name) => name !== 'LOCK' && statSync(join(source, name)).isFile())
    expect(files.some((name) => name.endsWith('.ldb')) && files.some((name) => name.endsWith('.log'))).toBe(true)
    const damage = fc.record({
      file: fc.constantFrom(...files),
      kind: fc.constantFrom('flip', 'cut', 'delete'),
      // Where in the file, in millionths of its size (spread evenly, not biased to the ends).
      at: fc.integer({ min: 0, max: 999_999 }).map((millionths) => millionths / 1e6),
    })
    await fc.assert(
      fc.asyncProperty(damage, async ({ file, kind, at }) => {
        const folder = folders.path()
        cpSync(source, folder, { recursive: true })
        const path = join(folder, file)
        const size = statSync(path).size
        if (kind === 'delete') rmSync(path)
        else if (kind === 'cut') truncateSync(path, Math.floor(size * at))
        else if (size >= 2) flipBytes(path, Math.floor(size * at))
        const result = await outcome(folder, added, folderKind)
        // Any coded error is the promise kept (the tests above pin which code each case gets).
        if (!('error' in result)) expect(result.missing, `${kind} ${file} at ${at}: keys read absent without an error`).toBe(0)
        rmSync(folder, { recursive: true, force: true })
      }),
      { seed: 20261124, numRuns: 30 },
    )
  }, 120_000)
})

describe.each(FOLDER_KINDS)('$kind: records LevelDB drops', (folderKind) => {
  // LevelDB skips a log block it cannot read and carries on with later writes; these cases drop
  // or roll back exactly one record the way that can, and check that it is noticed.
  async function filterWith(batches: number): Promise<{ folder: string; added: string[] }> {
    const folder = folders.path()
    const filter = await LevelBloomFilter.create(folder, { capacity: 50_000, errorRate: 0.01, ...folderKind.create })
    const added: string[] = []
    for (let i = 0; i < batches; i++) {
      const batch = keys(`b${i}`, 2000)
      await filter.addMany(batch)
      added.push(...batch)
    }
    await filter.close()
    return { folder, added }
  }

  test('a page that is missing, though it was written, is BLOOM_DATA_LOST naming it, not a page of zeros', async () => {
    const { folder, added } = await filterWith(5)
    const [page] = await withRaw(folder, async (db) => {
      const pages = await db.keys({ gte: 'p', lt: 'q' }).all()
      await db.del(pages[0])
      return pages
    })
    const result = await outcome(folder, added, folderKind)
    expect(result).toMatchObject({ error: { code: 'BLOOM_DATA_LOST', message: expect.stringMatching(/page 0 of shard 0 is missing.*restore.*rebuild/s) } })
    expect(page).toBe('p000000000000')
  })

  test('a page rolled back to an older version (its newer write lost, the log already folded in) is BLOOM_DATA_LOST', async () => {
    const { folder, added } = await filterWith(2)
    const older = await withRaw(folder, async (db) => db.get('p000000000000'))
    const filter = await openKind(folder, folderKind)
    const more = keys('later', 4000)
    await filter.addMany(more)
    await filter.close()
    await withRaw(folder, (db) => db.put('p000000000000', older!))
    const result = await outcome(folder, [...added, ...more], folderKind)
    // A plain filter wrote page 0 once (at close), a counting one with each batch.
    const version = folderKind.kind === 'counting' ? 2 : 1
    expect(result).toMatchObject({ error: { code: 'BLOOM_DATA_LOST', message: expect.stringContaining(`page 0 of shard 0 is version ${version}, but version ${version + 1}`) } })
  })

  test('a log record missing from the middle of the log (a crash left it to replay) is BLOOM_DATA_LOST', async () => {
    const folder = folders.path()
    // A child adds batches and is killed, so the log is left for the next open to replay.
    const child = runChild(childEntry(), 'load', folder, { batchKeys: 2000, capacity: 50_000, ...folderKind.create })
    await child.waitFor((line) => line === 'added 5')
    child.process.kill('SIGKILL')
    await child.exited
    const logs = await withRaw(folder, async (db) => {
      const records = await db.keys({ gte: 'l', lt: 'm' }).all()
      await db.del(records[2])
      return records
    })
    expect(logs.length).toBeGreaterThan(4)
    const result = await outcome(folder, keys('b0', 2000), folderKind)
    expect(result).toMatchObject({ error: { code: 'BLOOM_DATA_LOST', message: expect.stringContaining('log record') } })
  })

  test('the anchor file deleted or damaged is BLOOM_CORRUPT_STORE naming it; the filter is not opened without it', async () => {
    const { folder, added } = await filterWith(1)
    const deleted = folders.path()
    cpSync(folder, deleted, { recursive: true })
    rmSync(join(deleted, 'BLOOMKIT-ANCHOR'))
    expect(await outcome(deleted, added, folderKind)).toMatchObject({ error: { code: 'BLOOM_CORRUPT_STORE', message: expect.stringContaining('BLOOMKIT-ANCHOR is missing') } })
    flipBytes(join(folder, 'BLOOMKIT-ANCHOR'), 6)
    expect(await outcome(folder, added, folderKind)).toMatchObject({ error: { code: 'BLOOM_CORRUPT_STORE', message: expect.stringContaining('is damaged') } })
  })

  test('create() on a folder whose records LevelDB lost (its whole .log deleted) is BLOOM_DATA_LOST, not a new empty filter', async () => {
    // A small filter: every record is still in LevelDB's .log when it closes.
    const { folder, added } = await filterWith(1)
    for (const file of filesOf(folder, '.log')) rmSync(file)
    for (const file of filesOf(folder, '.ldb')) rmSync(file)
    await expect(LevelBloomFilter.create(folder, { capacity: 50_000, errorRate: 0.01, ...folderKind.create })).rejects.toMatchObject({ code: 'BLOOM_DATA_LOST' })
    expectNoSilentLoss(await outcome(folder, added, folderKind), folder, 'every record gone')
    expect(await outcome(folder, added, folderKind)).toMatchObject({ error: { code: 'BLOOM_DATA_LOST' } })
  })
})

describe.each(FOLDER_KINDS)('$kind: a process killed mid-load', (folderKind) => {
  test('killed, then its .log cut short or flipped: a coded error or every resolved key present', async () => {
    const base = folders.path()
    // A counting filter writes its pages with every batch: a smaller one keeps the load quick.
    const child = runChild(childEntry(), 'load', base, { batchKeys: 2000, ...folderKind.create, ...(folderKind.kind === 'counting' ? { capacity: 100_000 } : {}) })
    await child.waitFor((line) => line === 'added 30')
    child.process.kill('SIGKILL')
    await child.exited
    let resolved = -1
    for (const line of child.lines) if (line.startsWith('added ')) resolved = Math.max(resolved, Number(line.slice(6)))
    const added: string[] = []
    for (let i = 0; i <= resolved; i++) added.push(...keys(`b${i}`, 2000))
    const damages: [string, (file: string) => void][] = [
      ['cut to 90 %', (file) => truncateSync(file, Math.floor(statSync(file).size * 0.9))],
      ['cut in half', (file) => truncateSync(file, Math.floor(statSync(file).size / 2))],
      ['two bytes flipped in the middle', (file) => flipBytes(file, Math.floor(statSync(file).size / 2))],
    ]
    for (const [what, damage] of damages) {
      const folder = folders.path()
      cpSync(base, folder, { recursive: true })
      damage(filesOf(folder, '.log').at(-1)!)
      expectNoSilentLoss(await outcome(folder, added, folderKind), folder, `.log ${what}`)
    }
    // Undamaged, the same folder holds every key that resolved.
    expect(await outcome(base, added, folderKind)).toEqual({ missing: 0 })
  }, 60_000)
})

describe.each(FOLDER_KINDS)('$kind: damaged folders opened in a child process', (folderKind) => {
  // LevelDB has assertions compiled in: a damaged file it does not check (a table's blocks are not
  // checksummed on reads) could abort the process. Here each case runs in a child, so an abort is
  // the child's exit (a failure here), not the test runner's: the child must get through every
  // case and exit cleanly, each with a coded error or every key present.
  const added = keys('c', 100_000)
  let source: string
  beforeAll(async () => {
    source = folders.path()
    const filter = await LevelBloomFilter.create(source, { capacity: 100_000, errorRate: 0.01, ...folderKind.create })
    for (let i = 0; i < added.length; i += 5_000) await filter.addMany(added.slice(i, i + 5_000))
    await filter.close()
  }, 60_000)

  test('two bytes flipped at 24 places in the newest .log and 4 in each table and the manifest; the .log cut or deleted', async () => {
    const files = readdirSync(source)
    const log = files.filter((name) => name.endsWith('.log')).sort().at(-1)!
    const cases = [
      ...Array.from({ length: 24 }, (_, i) => ({ file: log, how: 'flip', at: (i + 0.5) / 24 })),
      ...files.filter((name) => name.endsWith('.ldb') || name.startsWith('MANIFEST-')).flatMap((file) => Array.from({ length: 4 }, (_, i) => ({ file, how: 'flip', at: (i + 0.5) / 4 }))),
      { file: log, how: 'cut', at: 0.5 },
      { file: log, how: 'delete', at: 0 },
    ]
    const child = runChild(childEntry(), 'damage', folders.path(), { source, cases, kind: folderKind.kind, prefix: 'c', keys: added.length })
    const { code, signal, stderr } = await child.exited
    expect({ code, signal }, `the child died (${stderr.slice(-500)}) after ${child.lines.at(-1)}`).toEqual({ code: 0, signal: null })
    expect(child.lines.at(-1)).toBe('done')
    const results = child.lines.filter((line) => line.startsWith('case ')).map((line) => JSON.parse(line.slice(line.indexOf('{'))))
    expect(results).toHaveLength(cases.length)
    results.forEach((result, i) => {
      const what = `${cases[i].how} ${cases[i].file} at ${cases[i].at}`
      if ('missing' in result) expect(result.missing, `${what}: keys read absent without an error`).toBe(0)
      else expect(DAMAGE_CODES, `${what}: ${result.code} ${result.message}`).toContain(result.code)
    })
    // The damage was seen: the newest .log deleted is always an error.
    expect(results.at(-1)).toMatchObject({ code: 'BLOOM_DATA_LOST' })
  }, 180_000)
})
