/**
 * A fixed number of page slots in one arena with CLOCK replacement (a "recently used" bit per slot, cheaper than
 * LRU's reordering on every hit). Pages needed by the current step are pinned so they stay while
 * the step loads the rest. Pure bookkeeping: the store does the I/O.
 *
 * The slots are consecutive `pageBytes` runs of one `Uint8Array`, so the hot loops index a single
 * array (as the memory backend does) instead of reaching through a per-page object, and loading a
 * page allocates nothing that lives on.
 */
export class PageCache {
  /** Slots, i.e. the most pages held at once. */
  readonly capacity: number
  /** Page number → slot, or −1 when the page is not held. Page numbers are `shard · pagesPerShard + page`. */
  readonly slotOf: Int32Array
  /** Slot → page number, or −1 for a free slot. */
  readonly pageOf: Int32Array
  /** Every slot's bytes: slot `s` is `arena[s · pageBytes …]`. */
  readonly arena: Uint8Array
  /** Slot → bytes of its page (the last page of a shard may be short). */
  readonly length: Int32Array
  readonly pageBytes: number
  /** Slot → 1 when the page differs from what is stored. */
  readonly dirty: Uint8Array
  /** Pages marked dirty and not yet written. */
  dirtyCount = 0
  /**
   * When the cache has a slot for every page of the filter, page `p` lives in slot `p`, so the
   * arena is laid out like the filter itself and nothing is ever evicted.
   */
  readonly direct: boolean
  /** Slots holding a page. */
  used = 0
  /** Slot → 1 when used since CLOCK's hand last passed; set by hits on the hot path. */
  readonly referenced: Uint8Array
  private readonly pinned: Uint32Array
  private epoch = 1
  private hand = 0

  constructor(capacity: number, pages: number, pageBytes: number) {
    this.capacity = capacity
    this.direct = capacity === pages
    this.pageBytes = pageBytes
    this.slotOf = new Int32Array(pages).fill(-1)
    this.pageOf = new Int32Array(capacity).fill(-1)
    this.arena = new Uint8Array(capacity * pageBytes)
    this.length = new Int32Array(capacity)
    this.dirty = new Uint8Array(capacity)
    this.referenced = new Uint8Array(capacity)
    this.pinned = new Uint32Array(capacity)
  }

  /** Starts a step: pins from earlier steps no longer hold. */
  beginStep(): void {
    this.epoch = (this.epoch + 1) >>> 0 || 1
  }

  /** Pins a held page for this step and marks it used; returns true the first time in the step. */
  pin(slot: number): boolean {
    this.referenced[slot] = 1
    if (this.pinned[slot] === this.epoch) return false
    this.pinned[slot] = this.epoch
    return true
  }

  /** Marks a slot's page as changed. */
  markDirty(slot: number): void {
    if (this.dirty[slot] === 0) {
      this.dirty[slot] = 1
      this.dirtyCount++
    }
  }

  /** Marks a slot's page as written. */
  markClean(slot: number): void {
    if (this.dirty[slot] === 1) {
      this.dirty[slot] = 0
      this.dirtyCount--
    }
  }

  /**
   * Picks slots for `pages` not pinned in this step (free ones first, then by CLOCK) and pins them;
   * in direct mode, the pages' own slots.
   * The caller writes the dirty ones, then {@link install}s new pages.
   * @throws RangeError when fewer than `count` slots are unpinned (a bug in the caller's grouping).
   */
  chooseVictims(count: number, pages: readonly number[]): number[] {
    if (this.direct) {
      for (const page of pages) this.pinned[page] = this.epoch
      return pages.slice()
    }
    const victims: number[] = []
    let scanned = 0
    while (victims.length < count) {
      if (scanned++ > 3 * this.capacity) throw new RangeError(`page cache: cannot free ${count} slots of ${this.capacity}`)
      const slot = this.hand
      this.hand = (this.hand + 1) % this.capacity
      if (this.pinned[slot] === this.epoch) continue
      if (this.pageOf[slot] >= 0 && this.referenced[slot] === 1) {
        this.referenced[slot] = 0
        continue
      }
      this.pinned[slot] = this.epoch
      victims.push(slot)
    }
    return victims
  }

  /** A slot's page bytes (a view into the arena). */
  view(slot: number): Uint8Array {
    const start = slot * this.pageBytes
    return this.arena.subarray(start, start + this.length[slot])
  }

  /**
   * Puts `page` into `slot`, dropping what was there (which must be clean by now): a copy of
   * `bytes`, or `length` zero bytes for a page never written.
   */
  install(slot: number, page: number, length: number, bytes: Uint8Array | undefined): void {
    const old = this.pageOf[slot]
    if (old >= 0) this.slotOf[old] = -1
    else this.used++
    this.markClean(slot)
    this.pageOf[slot] = page
    this.slotOf[page] = slot
    this.length[slot] = length
    const start = slot * this.pageBytes
    if (bytes === undefined) this.arena.fill(0, start, start + length)
    else this.arena.set(bytes, start)
    this.referenced[slot] = 1
  }

  /** Forgets every page (after the stored pages were deleted). */
  reset(): void {
    this.slotOf.fill(-1)
    this.pageOf.fill(-1)
    this.dirty.fill(0)
    this.dirtyCount = 0
    this.used = 0
    this.referenced.fill(0)
  }
}
