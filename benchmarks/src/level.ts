import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { sizeFilter, type BitLayout } from '@bloomkit/core'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { chunks, cycle, medianOpsPerSecond, sizeLabel, userKeys, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'

const CHUNK = 100_000
/** A budget larger than every filter here: the filter is in cache. */
const LARGE_CACHE = 64 * 2 ** 20
/** Raw LevelDB writes this many small values per batch() (the reference figure). */
const RAW_BATCH = 1000
/** Raw writes stop after this long; the rate is reported with the count actually written. */
const RAW_TIME_MS = 12_000
const QUICK_RAW_TIME_MS = 2_000

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 1)} MiB`
const labelOf = sizeLabel

/** A cache budget about a quarter of the filter, in whole 64 KiB (at least 256 KiB). */
function smallCache(filterBytes: number): number {
  return Math.max(4, Math.floor(filterBytes / 4 / 65_536)) * 65_536
}

/**
 * The LevelDB backend: addMany and hasMany keys/s for filters sized for 1M and 10M keys (p = 1 %),
 * with the filter in cache and with a cache of about a quarter of it, in the default and `sync`
 * modes; raw LevelDB `batch()` writes of small values in the same run; and the page size.
 *
 * addMany is timed on fresh keys only (each timed call adds the next 100k keys), so it measures
 * what a resolved add costs: hashing, setting bits, the log record and its share of checkpoints.
 * Out of cache, and in sync mode, fewer keys than the capacity are added (the row says how many):
 * a batch of 16 384 keys touches nearly every page whatever the fill, so the rate does not depend on it.
 */
export async function runLevelBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  // A quick run: the 1M filter in the default mode, in and out of cache, and a shorter raw write.
  const sizes = quick ? [1_000_000] : [1_000_000, 10_000_000]
  const modes = quick ? [false] : [false, true]
  const rawTime = quick ? QUICK_RAW_TIME_MS : RAW_TIME_MS
  const steps = sizes.length * modes.length
  let step = 0
  report.describeChart({
    id: 'level',
    title: 'LevelDB: keys per second, batches of 100k',
    subtitle: 'filter pages in cache vs a cache of about a quarter of the filter; raw LevelDB writes of small values for scale',
  })
  const root = mkdtempSync(join(tmpdir(), 'bloomkit-bench-level-'))
  let folders = 0
  const folder = () => join(root, `f${folders++}`)
  try {
    const largest = Math.max(...sizes)
    const allKeys = userKeys(0, largest)
    for (const n of sizes) {
      const keys = n === largest ? allKeys : allKeys.slice(0, n)
      const filterBytes = sizeFilter({ capacity: n, errorRate: 0.01 }).bits / 8
      for (const sync of modes) {
        report.progress(step++, steps, `${labelOf(n)} keys, ${sync ? 'sync' : 'default'} mode`)
        for (const cacheBytes of [LARGE_CACHE, smallCache(filterBytes)]) {
          await benchFilter(report, folder(), keys, cacheBytes, sync, 'blocked')
        }
        // Out of cache, the layout decides how many pages a key touches: one (blocked) or up to k.
        if (!sync) await benchFilter(report, folder(), keys, smallCache(filterBytes), sync, 'classic')
        await benchRaw(report, folder(), n, sync, rawTime)
      }
    }
    if (!quick) {
      report.progress(step, steps + 1, 'page sizes')
      await benchPageSizes(report, folder, allKeys.slice(0, 1_000_000))
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

async function benchFilter(report: Report, location: string, keys: readonly string[], cacheBytes: number, sync: boolean, layout: BitLayout): Promise<void> {
  const n = keys.length
  const filter = await LevelBloomFilter.create(location, { capacity: n, errorRate: 0.01, cacheBytes, sync, layout })
  const filterBytes = filter.parameters.bits / 8
  const inCache = cacheBytes >= filterBytes
  const where = inCache ? `in cache (${mib(cacheBytes)} budget)` : `cache ${mib(cacheBytes)} < filter`
  const mode = (sync ? 'sync' : 'default') + (layout === 'classic' ? ', classic layout' : '')
  const task = (what: string) => `${what} ${labelOf(n)}, ${where}, ${mode}`
  const keyChunks = chunks(keys, CHUNK)
  let next = 0
  const addMany = await medianOpsPerSecond(task('addMany'), CHUNK, () => filter.addMany(keyChunks[next++ % keyChunks.length]), {
    time: inCache && !sync ? 1000 : 500,
    iterations: 3,
  })
  let fillNote = ''
  if (inCache && !sync && next < keyChunks.length) {
    // The rest of the keys, untimed by tinybench but timed as one pass, so hasMany runs on a full filter.
    const start = performance.now()
    const rest = keys.length - next * CHUNK
    for (; next < keyChunks.length; next++) await filter.addMany(keyChunks[next])
    fillNote = `; rest of the fill (${labelOf(rest)} keys) at ${((rest / (performance.now() - start)) * 1000 / 1e3).toFixed(0)} k/s`
  }
  const added = Math.min(next, keyChunks.length)
  const present = cycle(keyChunks.slice(0, added))
  const hasMany = await medianOpsPerSecond(task('hasMany'), CHUNK, () => filter.hasMany(present()), { time: inCache ? 1000 : 500, iterations: 3 })
  const closeStart = performance.now()
  await filter.close()
  const closeMs = performance.now() - closeStart
  const notes = `filter ${mib(filterBytes)}, ${labelOf(added * CHUNK)} keys added, 16 KiB pages; close ${closeMs.toFixed(0)} ms; RSS ${mib(process.memoryUsage().rss)}`
  const series = `${inCache ? 'filter in cache' : 'cache ≈ ¼ of the filter'}${layout === 'classic' ? ', classic layout' : ''}`
  const group = (what: string) => `${what} ${labelOf(n)}${sync ? ', sync' : ''}`
  const headline = (what: string) => (!sync && layout === 'blocked' && n === 1_000_000 ? `LevelDB: ${what}, 1M-key filter, ${inCache ? 'in cache' : 'cache ¼ of it'}` : undefined)
  report.add({ suite: 'level', task: task('addMany'), subject: 'bloomkit', batch: CHUNK, opsPerSecond: addMany, notes: notes + fillNote, chart: { chart: 'level', group: group('addMany'), series }, headline: inCache ? headline('addMany') : undefined })
  report.add({ suite: 'level', task: task('hasMany'), subject: 'bloomkit', batch: CHUNK, opsPerSecond: hasMany, chart: { chart: 'level', group: group('hasMany'), series }, headline: inCache ? undefined : headline('hasMany') })
}

/** Raw LevelDB: `n` small values (a 10-byte key, an 8-byte value) written with batch() of 1000, for at most `timeMs`. */
async function benchRaw(report: Report, location: string, n: number, sync: boolean, timeMs: number): Promise<void> {
  const db = new Level<string, Uint8Array>(location, { valueEncoding: 'view' })
  await db.open()
  const value = new Uint8Array(8)
  const start = performance.now()
  let written = 0
  while (written < n && performance.now() - start < (sync ? timeMs / 3 : timeMs)) {
    const ops = new Array<{ type: 'put'; key: string; value: Uint8Array }>(RAW_BATCH)
    for (let i = 0; i < RAW_BATCH; i++) ops[i] = { type: 'put', key: `k${(written + i).toString(16).padStart(9, '0')}`, value }
    await db.batch(ops, { sync })
    written += RAW_BATCH
  }
  const rate = written / ((performance.now() - start) / 1000)
  await db.close()
  report.add({
    suite: 'level',
    task: `raw batch() of ${RAW_BATCH} small values, ${labelOf(n)}, ${sync ? 'sync' : 'default'}`,
    subject: 'raw LevelDB',
    batch: RAW_BATCH,
    opsPerSecond: rate,
    chart: { chart: 'level', group: `addMany ${labelOf(n)}${sync ? ', sync' : ''}`, series: `raw LevelDB batch() of ${RAW_BATCH} small values` },
    notes: written < n ? `time-bounded: ${labelOf(written)} of ${labelOf(n)} values written` : `all ${labelOf(n)} values, one pass`,
  })
}

/** Page size: a 1M-key filter with a 256 KiB cache (about a fifth of it), default mode. */
async function benchPageSizes(report: Report, folder: () => string, keys: readonly string[]): Promise<void> {
  const keyChunks = chunks(keys, CHUNK)
  for (const pageBytes of [4096, 16_384, 65_536]) {
    const filter = await LevelBloomFilter.create(folder(), { capacity: keys.length, errorRate: 0.01, cacheBytes: 262_144, pageBytes })
    let next = 0
    const addMany = await medianOpsPerSecond(`addMany page ${pageBytes}`, CHUNK, () => filter.addMany(keyChunks[next++ % keyChunks.length]), { time: 500, iterations: 3 })
    const present = keys.slice(0, next * CHUNK)
    const batch = cycle(chunks(present, CHUNK))
    const hasMany = await medianOpsPerSecond(`hasMany page ${pageBytes}`, CHUNK, () => filter.hasMany(batch()), { time: 500, iterations: 3 })
    let probe = 0
    const one = await medianOpsPerSecond(`has page ${pageBytes}`, 200, async () => {
      for (let i = 0; i < 200; i++) await filter.has(present[(probe = (probe + 7919) % present.length)])
    }, { time: 500, iterations: 3 })
    await filter.close()
    const task = `${pageBytes / 1024} KiB pages, 1M filter, 256 KiB cache`
    report.add({ suite: 'level', task: `addMany ${task}`, subject: 'bloomkit', batch: CHUNK, opsPerSecond: addMany })
    report.add({ suite: 'level', task: `hasMany ${task}`, subject: 'bloomkit', batch: CHUNK, opsPerSecond: hasMany })
    report.add({ suite: 'level', task: `has ${task}`, subject: 'bloomkit', batch: 1, opsPerSecond: one })
  }
}
