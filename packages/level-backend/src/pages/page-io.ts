import { popcount } from '@bloomkit/core/store'
import type { Database } from '../folder/database.js'
import type { PageCache } from './page-cache.js'
import type { PageGeometry } from './page-geometry.js'
import type { PageVersions } from '../folder/page-versions.js'
import { decodePage, encodePage, PAGE_RANGE, parsePageKey } from '../folder/records.js'

/** Bytes of pages per LevelDB batch when a checkpoint writes them, so one batch never holds the whole cache. */
const WRITE_BATCH_BYTES = 4 * 2 ** 20
/**
 * Most bytes of pages loaded (and of dirty pages evicted) per step when a batch does not fit the
 * cache: LevelDB hands each page over as a fresh buffer, so big steps meant big transient memory.
 */
const STEP_BYTES = 4 * 2 ** 20

/**
 * Moves pages between LevelDB and the page cache: loading (with eviction), ranges, checkpoint
 * writes, counting. Every page read is checked against its version, so a page LevelDB lost is an
 * error (`BLOOM_DATA_LOST`), never a page of zeros.
 */
export class PageIO {
  /** Pages per step when working through more pages than the cache holds. */
  readonly stepPages: number

  readonly location: string
  readonly db: Database
  readonly cache: PageCache
  readonly geometry: PageGeometry
  readonly versions: PageVersions
  /** Whether eviction writes fsync. */
  private readonly sync: boolean

  constructor(parts: {
    readonly location: string
    readonly db: Database
    readonly cache: PageCache
    readonly geometry: PageGeometry
    readonly versions: PageVersions
    /** Whether eviction writes fsync. */
    readonly sync: boolean
  }) {
    this.location = parts.location
    this.db = parts.db
    this.cache = parts.cache
    this.geometry = parts.geometry
    this.versions = parts.versions
    this.sync = parts.sync
    this.stepPages = Math.min(parts.cache.capacity, Math.max(1, STEP_BYTES / parts.geometry.pageBytes))
  }

  /** Loads pages (numbers not held) into slots freed by CLOCK, writing dirty victims first in one batch. */
  async load(pages: number[]): Promise<void> {
    const { cache, geometry, versions } = this
    const victims = cache.chooseVictims(pages.length, pages)
    const writes: { type: 'put'; key: string; value: Uint8Array }[] = []
    for (const slot of victims) {
      if (cache.dirty[slot] === 0) continue
      const page = cache.pageOf[slot]
      writes.push({ type: 'put', key: geometry.keyOf(page), value: encodePage(cache.view(slot), versions.next(page)) })
    }
    const [values] = await Promise.all([
      // fillCache: false, since the page cache holds what was read; LevelDB's block cache would double it.
      this.db.getMany(pages.map((page) => geometry.keyOf(page)), { fillCache: false }),
      writes.length > 0 ? this.db.batch(writes, { sync: this.sync }) : undefined,
    ])
    for (const slot of victims) cache.markClean(slot)
    for (let j = 0; j < pages.length; j++) {
      const page = pages[j]
      const value = values[j]
      const shard = geometry.shardOf(page)
      const index = page - shard * geometry.pagesPerShard
      const length = geometry.pageLength(index)
      const stored = value === undefined ? undefined : decodePage(this.location, shard, index, length, value)
      versions.check(this.location, page, shard, index, stored?.version)
      cache.install(victims[j], page, length, stored?.bytes)
    }
  }

  /** Visits bytes [offset, offset + length) of a shard page by page, a cacheful of pages at a time. */
  async forRange(
    shard: number,
    offset: number,
    length: number,
    visit: (page: Uint8Array, from: number, at: number, n: number, slot: number) => void,
  ): Promise<void> {
    if (length === 0) return
    const { cache, stepPages } = this
    const { pageBytes, pagesPerShard } = this.geometry
    const first = Math.floor(offset / pageBytes)
    const last = Math.floor((offset + length - 1) / pageBytes)
    for (let start = first; start <= last; start += stepPages) {
      const end = Math.min(last, start + stepPages - 1)
      cache.beginStep()
      const need: number[] = []
      for (let index = start; index <= end; index++) {
        const page = shard * pagesPerShard + index
        const slot = cache.slotOf[page]
        if (slot >= 0) cache.pin(slot)
        else need.push(page)
      }
      if (need.length > 0) await this.load(need)
      for (let index = start; index <= end; index++) {
        const slot = cache.slotOf[shard * pagesPerShard + index]
        const pageStart = index * pageBytes
        const from = Math.max(offset, pageStart)
        const to = Math.min(offset + length, pageStart + pageBytes)
        visit(cache.view(slot), from - pageStart, from - offset, to - from, slot)
      }
    }
  }

  /** Writes every dirty page, fsynced, in batches of a few MiB so that memory stays bounded. */
  async writeDirty(): Promise<void> {
    const { cache, geometry, versions } = this
    let ops: { type: 'put'; key: string; value: Uint8Array }[] = []
    let bytes = 0
    let written: number[] = []
    const flush = async () => {
      if (ops.length === 0) return
      await this.db.batch(ops, { sync: true })
      for (const slot of written) cache.markClean(slot)
      ops = []
      written = []
      bytes = 0
    }
    for (let slot = 0; slot < cache.capacity && cache.dirtyCount > 0; slot++) {
      if (cache.dirty[slot] === 0) continue
      const page = cache.pageOf[slot]
      ops.push({ type: 'put', key: geometry.keyOf(page), value: encodePage(cache.view(slot), versions.next(page)) })
      written.push(slot)
      bytes += geometry.pageBytes
      if (bytes >= WRITE_BATCH_BYTES) await flush()
    }
    await flush()
  }

  /**
   * Set bits per shard: held pages from the cache, the rest streamed from LevelDB one page at a
   * time, each checked against its version; a page with a version that is not there is lost.
   */
  async scanCounts(shards: number): Promise<Float64Array> {
    const counts = new Float64Array(shards)
    const { cache, geometry, versions } = this
    for (let slot = 0; slot < cache.capacity; slot++) {
      const page = cache.pageOf[slot]
      if (page >= 0) counts[geometry.shardOf(page)] += popcount(cache.view(slot))
    }
    const seen = new Uint8Array(geometry.pages)
    for await (const [key, value] of this.db.iterator(PAGE_RANGE)) {
      const { shard, page: index } = parsePageKey(key)
      const page = shard * geometry.pagesPerShard + index
      if (shard >= shards || index >= geometry.pagesPerShard) continue
      seen[page] = 1
      if (cache.slotOf[page] >= 0) continue
      const stored = decodePage(this.location, shard, index, geometry.pageLength(index), value)
      versions.check(this.location, page, shard, index, stored.version)
      counts[shard] += popcount(stored.bytes)
    }
    for (let page = 0; page < geometry.pages; page++) {
      if (seen[page] === 0 && cache.slotOf[page] < 0) {
        const shard = geometry.shardOf(page)
        versions.check(this.location, page, shard, page - shard * geometry.pagesPerShard, undefined)
      }
    }
    return counts
  }
}
