import { SET_BITS, testBitSetBit, testOrSetBatch, TEST_BITS, type BitMode, type PositionBatch } from '@bloomkit/core/store'
import type { PageCache } from './page-cache.js'
import type { PageGeometry } from './page-geometry.js'
import type { PageIO } from './page-io.js'

/**
 * Sets or tests a batch's bits in the page cache, loading the pages it needs through {@link PageIO}.
 * Three paths, fastest first: the whole filter held in direct mode (indexed like the memory
 * backend); every page the batch needs held or loadable at once (key by key); and a batch that
 * needs more pages than the cache holds (sorted by page, worked through a cacheful at a time).
 */
export class BatchApplier {
  private readonly cache: PageCache
  private readonly geometry: PageGeometry
  /** Scratch of applySorted: entries in page order, each entry's page, and page → bucket (−1 when unused). */
  private order = new Int32Array(0)
  private entryPage = new Int32Array(0)
  private bucketOf: Int32Array | undefined

  constructor(private readonly io: PageIO) {
    this.cache = io.cache
    this.geometry = io.geometry
  }

  /**
   * Sets ({@link SET_BITS}) or tests ({@link TEST_BITS}) the batch's bits; `out[i]` as in the
   * BitStore contract. Returns how many keys were new. `counts` (set bits per shard), when known,
   * is kept up to date.
   */
  async apply(batch: PositionBatch, out: Uint8Array, mode: BitMode, counts: Float64Array | undefined): Promise<number> {
    const set = mode === SET_BITS
    if (this.cache.direct && this.cache.used === this.cache.capacity) {
      // The whole filter is in the arena, laid out as in a snapshot: index it like the memory backend does.
      if (set) return this.setDirect(batch, out, counts)
      this.testDirect(batch, out)
      return 0
    }
    // A test changes nothing, so it can simply start over when it meets a page that is not held.
    if (!set && this.testInOrder(batch, out)) return 0
    if (set && this.allHeld(batch)) return this.setInOrder(batch, out, counts)
    if (!(await this.loadForBatch(batch))) return this.applySorted(batch, out, mode, counts)
    if (set) return this.setInOrder(batch, out, counts)
    this.testInOrder(batch, out)
    return 0
  }

  /** Whether every page the batch touches is in the cache (the common case once a filter is warm). */
  private allHeld(batch: PositionBatch): boolean {
    const { size, hashes, shards, positions } = batch
    const { pagesPerShard, pageShift } = this.geometry
    const slotOf = this.cache.slotOf
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      for (const end = e + hashes; e < end; e++) {
        if (slotOf[base + (positions[e] >>> pageShift)] < 0) return false
      }
    }
    return true
  }

  /**
   * Pins the held pages the batch needs and loads the missing ones, if they all fit in the cache
   * at once; returns false (loading nothing) when they do not.
   */
  private async loadForBatch(batch: PositionBatch): Promise<boolean> {
    const { size, hashes, shards, positions } = batch
    const { cache } = this
    const { pagesPerShard, pageShift } = this.geometry
    const slotOf = cache.slotOf
    cache.beginStep()
    let held = 0
    const missing = new Set<number>()
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      for (const end = e + hashes; e < end; e++) {
        const page = base + (positions[e] >>> pageShift)
        const slot = slotOf[page]
        if (slot < 0) missing.add(page)
        else if (cache.pin(slot)) held++
        else continue
        if (held + missing.size > cache.capacity) return false
      }
    }
    await this.io.load([...missing])
    return true
  }

  private setInOrder(batch: PositionBatch, out: Uint8Array, counts: Float64Array | undefined): number {
    const { size, hashes, shards, positions } = batch
    const { cache } = this
    const { pagesPerShard, pageShift, pageBytes } = this.geometry
    const { slotOf, arena, referenced } = cache
    // A bit's position within its page: the kernel indexes the slot's bytes like a shard's.
    const bitMask = pageBytes * 8 - 1
    let added = 0
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      let fresh = 0
      for (const end = e + hashes; e < end; e++) {
        const position = positions[e]
        const slot = slotOf[base + (position >>> pageShift)]
        referenced[slot] = 1
        if (testBitSetBit(arena, slot * pageBytes, position & bitMask, 1) === 0) {
          cache.markDirty(slot)
          fresh = 1
          if (counts !== undefined) counts[shards[i]]++
        }
      }
      out[i] = fresh
      added += fresh
    }
    return added
  }

  /** setInOrder when the whole filter is held in direct mode: no page lookups. */
  private setDirect(batch: PositionBatch, out: Uint8Array, counts: Float64Array | undefined): number {
    const { size, hashes, shards, positions } = batch
    const { cache } = this
    const { pageShift, pagesPerShard, pageBytes } = this.geometry
    const arena = cache.arena
    const stride = pagesPerShard * pageBytes
    let added = 0
    for (let i = 0, e = 0; i < size; i++) {
      const shard = shards[i]
      const base = shard * stride
      let fresh = 0
      for (const end = e + hashes; e < end; e++) {
        const position = positions[e]
        if (testBitSetBit(arena, base, position, 1) === 0) {
          cache.markDirty(shard * pagesPerShard + (position >>> pageShift))
          fresh = 1
          if (counts !== undefined) counts[shard]++
        }
      }
      out[i] = fresh
      added += fresh
    }
    return added
  }

  /** testInOrder when the whole filter is held in direct mode. */
  private testDirect(batch: PositionBatch, out: Uint8Array): void {
    const { pagesPerShard, pageBytes } = this.geometry
    testOrSetBatch(this.cache.arena, pagesPerShard * pageBytes, batch, out, TEST_BITS)
  }

  /** Tests key by key; returns false, with `out` incomplete, at the first page that is not held. */
  private testInOrder(batch: PositionBatch, out: Uint8Array): boolean {
    const { size, hashes, shards, positions } = batch
    const { slotOf, arena, referenced } = this.cache
    const { pagesPerShard, pageShift, pageBytes } = this.geometry
    const bitMask = pageBytes * 8 - 1
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      let found = 1
      for (const end = e + hashes; e < end; e++) {
        const position = positions[e]
        const slot = slotOf[base + (position >>> pageShift)]
        if (slot < 0) return false
        referenced[slot] = 1
        if (testBitSetBit(arena, slot * pageBytes, position & bitMask, 0) === 0) {
          found = 0
          e = end
          break
        }
      }
      out[i] = found
    }
    return true
  }

  /**
   * The batch sorted by page, a cacheful of pages at a time. Within a page, entries keep batch order,
   * so "was key i new" comes out as if keys were set one after another.
   */
  private async applySorted(batch: PositionBatch, out: Uint8Array, mode: BitMode, counts: Float64Array | undefined): Promise<number> {
    const set = mode === SET_BITS
    const { size, hashes, shards, positions } = batch
    const entries = size * hashes
    const order = this.orderEntries(batch)
    const pageOf = this.entryPage
    out.fill(set ? 0 : 1, 0, size)
    const { cache } = this
    const { pageBytes } = this.geometry
    const { stepPages } = this.io
    const arena = cache.arena
    const bitMask = pageBytes * 8 - 1
    let added = 0
    for (let a = 0; a < entries; ) {
      cache.beginStep()
      const need: number[] = []
      let b = a
      let pages = 0
      let last = -1
      for (; b < entries; b++) {
        const page = pageOf[order[b]]
        if (page === last) continue
        if (pages === stepPages) break
        pages++
        last = page
        const slot = cache.slotOf[page]
        if (slot >= 0) cache.pin(slot)
        else need.push(page)
      }
      if (need.length > 0) await this.io.load(need)
      for (let j = a; j < b; j++) {
        const e = order[j]
        const i = (e / hashes) | 0
        const slot = cache.slotOf[pageOf[e]]
        const position = positions[e]
        if (set) {
          if (testBitSetBit(arena, slot * pageBytes, position & bitMask, 1) === 0) {
            cache.markDirty(slot)
            if (out[i] === 0) added++
            out[i] = 1
            if (counts !== undefined) counts[shards[i]]++
          }
        } else if (testBitSetBit(arena, slot * pageBytes, position & bitMask, 0) === 0) {
          out[i] = 0
        }
      }
      a = b
    }
    return added
  }

  /**
   * The batch's entries (key i's positions are entries i·hashes …) ordered by page, and by entry
   * within a page: a counting sort over the distinct pages, linear in the batch (a comparison sort
   * of the entries was a fifth of a batch's time). Fills `entryPage`; returns a view of `order`.
   */
  private orderEntries(batch: PositionBatch): Int32Array {
    const { size, hashes, shards, positions } = batch
    const entries = size * hashes
    if (this.order.length < entries) {
      this.order = new Int32Array(entries)
      this.entryPage = new Int32Array(entries)
    }
    const { order, entryPage } = this
    const { pagesPerShard, pageShift } = this.geometry
    const bucket = (this.bucketOf ??= new Int32Array(this.cache.slotOf.length).fill(-1))
    const distinct: number[] = []
    const tally: number[] = []
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      for (const end = e + hashes; e < end; e++) {
        const page = base + (positions[e] >>> pageShift)
        entryPage[e] = page
        let b = bucket[page]
        if (b < 0) {
          b = bucket[page] = distinct.length
          distinct.push(page)
          tally.push(0)
        }
        tally[b]++
      }
    }
    // Start of each page's run, pages in ascending order.
    let at = 0
    for (const page of Int32Array.from(distinct).sort()) {
      const b = bucket[page]
      const n = tally[b]
      tally[b] = at
      at += n
    }
    for (let e = 0; e < entries; e++) order[tally[bucket[entryPage[e]]]++] = e
    for (const page of distinct) bucket[page] = -1
    return order
  }
}
