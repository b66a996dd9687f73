import { BloomError, type FilterParameters, type FilterParametersInput } from '@bloomkit/core'
import { checkParameters, shardBytesOf, type BitStore, type BitStoreCapabilities, type PositionBatch } from '@bloomkit/core/store'
import {
  checkPageBytes,
  COUNTS_KEY,
  decodeCounts,
  decodeLogRecord,
  decodeMetadata,
  decodePage,
  DEFAULT_PAGE_BYTES,
  encodeCounts,
  encodeLogRecord,
  encodeMetadata,
  encodePage,
  IMPORTING_KEY,
  LOG_RANGE,
  logKey,
  META_KEY,
  PAGE_RANGE,
  pageKey,
  parseLogKey,
  parsePageKey,
  type LogRecord,
  type Metadata,
} from './layout.js'
import { Mutex } from './mutex.js'
import { popcount } from './popcount.js'
import { PageCache } from './page-cache.js'
import { canonicalLocation, closeDatabase, openDatabase, storeError, type Database } from './open-database.js'

/** Options for opening a LevelDB store; none of them is stored in the folder. */
export interface LevelStoreOptions {
  /**
   * The page cache's budget in bytes: at most this much of the filter's bits is held in memory.
   * From 4 pages to 2 GiB; never more than the filter's own size is allocated. Default: 64 MiB.
   */
  readonly cacheBytes?: number
  /**
   * Fsync LevelDB's log on every write, so a resolved `add` survives power loss, not just a crash
   * of the process. Several times slower. Ignored in browsers (IndexedDB decides). Default: false.
   */
  readonly sync?: boolean
  /**
   * Log bytes after which pages are checkpointed and the log deleted (it also waits for the log to
   * reach a quarter of the dirty pages' bytes, so that pages are not rewritten for a few keys).
   * Bounds the work of replaying the log at open. From 64 KiB. Default: 32 MiB.
   */
  readonly checkpointBytes?: number
}

/** Options for creating a LevelDB store; `pageBytes` is stored in the folder. */
export interface LevelCreateStoreOptions extends LevelStoreOptions {
  /** Bytes of bits per page (one LevelDB value), a power of two from 1 KiB to 1 MiB. Default: 16 KiB. */
  readonly pageBytes?: number
}

const DEFAULT_CACHE_BYTES = 64 * 2 ** 20
const DEFAULT_CHECKPOINT_BYTES = 32 * 2 ** 20
const MIN_CACHE_PAGES = 4
/** The cache is one Uint8Array; 2 GiB keeps it within every engine's typed-array limit. */
const MAX_CACHE_BYTES = 2 ** 31
/** Page tables cost 8 bytes per page outside the cache budget; 2^24 pages is 256 GiB of bits at 16 KiB pages. */
const MAX_PAGES = 2 ** 24
/** Bytes of pages per LevelDB batch when a checkpoint writes them, so one batch never holds the whole cache. */
const WRITE_BATCH_BYTES = 4 * 2 ** 20
/**
 * Most bytes of pages loaded (and of dirty pages evicted) per step when a batch does not fit the
 * cache: LevelDB hands each page over as a fresh buffer, so big steps meant big transient memory.
 */
const STEP_BYTES = 4 * 2 ** 20

function checkOption(name: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `${name} must be an integer from ${min} to ${max}; got ${String(value)}`)
  }
  return value
}

function checkSync(value: unknown): boolean {
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw new BloomError('BLOOM_INVALID_PARAMETER', `sync must be a boolean; got ${String(value)}`)
  return value
}

/**
 * A BitStore in a LevelDB folder (IndexedDB in browsers): the bits in pages, a bounded page cache,
 * and a log of the keys each `setBits` made new, so that a resolved add costs one small write.
 * See the package README for the layout and what each durability mode survives.
 */
export class LevelBitStore implements BitStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: false }
  readonly parameters: FilterParameters
  /** The folder (absolute path) or, in browsers, the IndexedDB name. */
  readonly location: string
  /** Bytes of bits per page. */
  readonly pageBytes: number
  /** Whether writes fsync LevelDB's log. */
  readonly sync: boolean
  private readonly db: Database
  private readonly cache: PageCache
  private readonly mutex = new Mutex()
  private readonly shardBytes: number
  private readonly pagesPerShard: number
  private readonly pageShift: number
  private readonly checkpointBytes: number
  /** Pages per step when working through more pages than the cache holds. */
  private readonly stepPages: number
  /** Set bits per shard, kept up to date once known; undefined until scanned or after writeShard/orShard. */
  private counts: Float64Array | undefined
  /** Whether the stored counts record may differ from `counts` (rewritten or deleted at the next checkpoint). */
  private countsChanged = false
  private firstSeq = 0
  private nextSeq = 0
  private logBytes = 0
  private readonly pending = new Set<Promise<unknown>>()
  /** Scratch of applySorted: entries in page order, each entry's page, and page → bucket (−1 when unused). */
  private order = new Int32Array(0)
  private entryPage = new Int32Array(0)
  private bucketOf: Int32Array | undefined
  /** Set by close(): new calls fail with BLOOM_CLOSED. */
  private closing: Promise<void> | undefined
  /** Set once the database is closed: calls queued before close() finish first, later ones fail. */
  private dbClosed = false

  /**
   * A new, empty store in `location`, or the existing one there if it has the same parameters.
   * @throws BloomError `BLOOM_INCOMPATIBLE` when the folder holds a filter with other parameters,
   *   `BLOOM_CORRUPT_STORE` when it holds something else, `BLOOM_LOCKED`, `BLOOM_INVALID_PARAMETER`,
   *   `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(location: string, parameters: FilterParametersInput, options: LevelCreateStoreOptions = {}): Promise<LevelBitStore> {
    const checked = checkParameters(parameters)
    const pageBytes = checkPageBytes(options.pageBytes ?? DEFAULT_PAGE_BYTES)
    checkPageTable(checked, pageBytes)
    checkStoreOptions(options)
    const where = canonicalLocation(location)
    const db = await openDatabase(where, true)
    try {
      const existing = await readMetadata(where, db, false)
      let meta: Metadata = { parameters: checked, pageBytes }
      if (existing === undefined) {
        // A new filter's counts are known (all zero) and kept from here on.
        await db.batch(
          [
            { type: 'put', key: META_KEY, value: encodeMetadata(meta) },
            { type: 'put', key: COUNTS_KEY, value: encodeCounts(new Float64Array(checked.shards)) },
          ],
          { sync: true },
        )
      } else {
        const p = existing.parameters
        if (p.bits !== checked.bits || p.hashes !== checked.hashes || p.shards !== checked.shards || p.seed !== checked.seed) {
          throw new BloomError(
            'BLOOM_INCOMPATIBLE',
            `${where} already holds a filter with other parameters: bits=${p.bits} hashes=${p.hashes} shards=${p.shards} seed=${p.seed}` +
              ` (asked for bits=${checked.bits} hashes=${checked.hashes} shards=${checked.shards} seed=${checked.seed}); open it, or use another folder`,
          )
        }
        meta = existing
      }
      return await LevelBitStore.adopt(where, db, meta, options)
    } catch (error) {
      await closeDatabase(where, db).catch(() => {})
      throw storeError(where, 'cannot be created', error)
    }
  }

  /**
   * The store in `location`, with the parameters stored there; replays any log left by a crash.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_STORE`, `BLOOM_LOCKED`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(location: string, options: LevelStoreOptions = {}): Promise<LevelBitStore> {
    checkStoreOptions(options)
    const where = canonicalLocation(location)
    const db = await openDatabase(where, false)
    try {
      const meta = await readMetadata(where, db, true)
      return await LevelBitStore.adopt(where, db, meta!, options)
    } catch (error) {
      await closeDatabase(where, db).catch(() => {})
      throw storeError(where, 'cannot be opened', error)
    }
  }

  /** Wraps a database already holding `meta` (used by create, open and import); replays its log. */
  static async adopt(location: string, db: Database, meta: Metadata, options: LevelStoreOptions): Promise<LevelBitStore> {
    const store = new LevelBitStore(location, db, meta, options)
    await store.mutex.run(() => store.replay())
    return store
  }

  private constructor(location: string, db: Database, meta: Metadata, options: LevelStoreOptions) {
    this.location = location
    this.db = db
    this.parameters = meta.parameters
    this.pageBytes = meta.pageBytes
    this.sync = checkSync(options.sync)
    this.shardBytes = shardBytesOf(meta.parameters)
    this.pagesPerShard = Math.ceil(this.shardBytes / this.pageBytes)
    this.pageShift = Math.log2(this.pageBytes * 8)
    this.checkpointBytes = checkOption('checkpointBytes', options.checkpointBytes, 65_536, Number.MAX_SAFE_INTEGER, DEFAULT_CHECKPOINT_BYTES)
    const cacheBytes = checkOption('cacheBytes', options.cacheBytes, MIN_CACHE_PAGES * this.pageBytes, MAX_CACHE_BYTES, DEFAULT_CACHE_BYTES)
    const pages = this.parameters.shards * this.pagesPerShard
    this.cache = new PageCache(Math.min(pages, Math.max(MIN_CACHE_PAGES, Math.floor(cacheBytes / this.pageBytes))), pages, this.pageBytes)
    this.stepPages = Math.min(this.cache.capacity, Math.max(1, STEP_BYTES / this.pageBytes))
  }

  /** Bytes of bits the page cache may hold. */
  get cacheBytes(): number {
    return this.cache.capacity * this.pageBytes
  }

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.write(async () => {
      const added = await this.apply(batch, out, true)
      if (added === 0) return undefined
      this.countsChanged = true
      const record = encodeLogRecord(added, batch.hashes, ...this.newKeys(batch, out, added))
      const seq = this.nextSeq++
      this.logBytes += record.length
      const written = this.db.put(logKey(seq), record, { sync: this.sync })
      this.track(written)
      return { written }
    })
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.read(() => this.apply(batch, out, false).then(() => undefined))
  }

  countBits(): Promise<number[]> {
    return this.read(async () => {
      if (this.counts === undefined) {
        this.counts = await this.scanCounts()
        this.countsChanged = true
      }
      return Array.from(this.counts)
    })
  }

  readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    return this.read(async () => {
      const out = new Uint8Array(length)
      await this.forRange(shard, offset, length, (bytes, from, at, n) => out.set(bytes.subarray(from, from + n), at))
      return out
    })
  }

  writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.write(async () => {
      // Folds the log into pages first: replaying an older log record later would set bits this write
      // clears. The same checkpoint deletes the stored counts before any page changes.
      this.counts = undefined
      this.countsChanged = true
      await this.checkpoint(true)
      await this.forRange(shard, offset, bytes.length, (page, from, at, n, slot) => {
        page.set(bytes.subarray(at, at + n), from)
        this.cache.markDirty(slot)
      })
      await this.checkpoint(true)
      return undefined
    })
  }

  orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.write(async () => {
      if (this.counts !== undefined || this.countsChanged) {
        // The stored counts go before any page changes (a crash in between must not leave them trusted).
        this.counts = undefined
        this.countsChanged = true
        await this.checkpoint(true)
      }
      await this.forRange(shard, offset, bytes.length, (page, from, at, n, slot) => {
        for (let i = 0; i < n; i++) page[from + i] |= bytes[at + i]
        this.cache.markDirty(slot)
      })
      await this.checkpoint(true)
      return undefined
    })
  }

  clear(): Promise<void> {
    return this.write(async () => {
      await this.settlePending()
      const ops: { type: 'del'; key: string }[] = []
      for await (const key of this.db.keys(PAGE_RANGE)) ops.push({ type: 'del', key })
      for await (const key of this.db.keys(LOG_RANGE)) ops.push({ type: 'del', key })
      const counts = new Float64Array(this.parameters.shards)
      // One fsynced batch: a crash leaves the filter either cleared or untouched.
      await this.db.batch([...ops, { type: 'put', key: COUNTS_KEY, value: encodeCounts(counts) }], { sync: true })
      this.cache.reset()
      this.counts = counts
      this.countsChanged = false
      this.firstSeq = this.nextSeq
      this.logBytes = 0
      return undefined
    })
  }

  /**
   * Writes every changed page and deletes the log, so that the next open replays nothing.
   * `close` does this too; call it to bound the work a crash leaves for the next open.
   */
  flush(): Promise<void> {
    return this.write(async () => {
      await this.checkpoint(true)
      return undefined
    })
  }

  close(): Promise<void> {
    this.closing ??= this.mutex.run(async () => {
      try {
        await this.checkpoint(true)
      } finally {
        this.dbClosed = true
        await closeDatabase(this.location, this.db)
      }
    })
    return this.closing.catch((error) => {
      throw storeError(this.location, 'cannot be closed cleanly (the log is kept and replayed at the next open)', error)
    })
  }

  /**
   * Runs a mutation under the mutex. A section may hand back a write still in flight (wrapped, so
   * that the mutex does not wait for it): it is awaited outside the mutex, so the next batch is
   * applied in memory while this one's log record is written. Then checkpoints if the log is due.
   */
  private async write(section: () => Promise<{ written: Promise<unknown> } | undefined>): Promise<void> {
    this.checkOpen()
    try {
      const result = await this.mutex.run(() => {
        this.checkStillOpen()
        return section()
      })
      if (result !== undefined) await result.written
      if (this.checkpointDue()) {
        await this.mutex.run(() => (this.dbClosed ? Promise.resolve() : this.checkpoint(false)))
      }
    } catch (error) {
      throw storeError(this.location, 'failed a write', error)
    }
  }

  private async read<T>(section: () => Promise<T>): Promise<T> {
    this.checkOpen()
    try {
      return await this.mutex.run(() => {
        this.checkStillOpen()
        return section()
      })
    } catch (error) {
      throw storeError(this.location, 'failed a read', error)
    }
  }

  private checkOpen(): void {
    if (this.closing !== undefined) throw new BloomError('BLOOM_CLOSED', `the store at ${this.location} is closed`)
  }

  private checkStillOpen(): void {
    if (this.dbClosed) throw new BloomError('BLOOM_CLOSED', `the store at ${this.location} is closed`)
  }

  /** Whether the log outgrew `checkpointBytes` and a quarter of the dirty pages (so pages are not rewritten for a few keys). */
  private checkpointDue(): boolean {
    return this.logBytes >= Math.max(this.checkpointBytes, (this.cache.dirtyCount * this.pageBytes) / 4)
  }

  private track(write: Promise<unknown>): void {
    this.pending.add(write)
    const forget = () => this.pending.delete(write)
    write.then(forget, forget)
  }

  private async settlePending(): Promise<void> {
    // Their failures were already reported to the calls that made them.
    await Promise.allSettled([...this.pending])
  }

  /**
   * Sets (`set`) or tests the batch's bits; `out[i]` as in the BitStore contract. Returns how many
   * keys were new. When every page the batch needs fits in the cache it works key by key; otherwise
   * it sorts the positions by page and works through the pages a cacheful at a time.
   */
  private async apply(batch: PositionBatch, out: Uint8Array, set: boolean): Promise<number> {
    if (this.cache.direct && this.cache.used === this.cache.capacity) {
      // The whole filter is in the arena, laid out as in a snapshot: index it like the memory backend does.
      if (set) return this.setDirect(batch, out)
      this.testDirect(batch, out)
      return 0
    }
    // A test changes nothing, so it can simply start over when it meets a page that is not held.
    if (!set && this.testInOrder(batch, out)) return 0
    if (set && this.allHeld(batch)) return this.setInOrder(batch, out)
    if (!(await this.loadForBatch(batch))) return this.applySorted(batch, out, set)
    if (set) return this.setInOrder(batch, out)
    this.testInOrder(batch, out)
    return 0
  }

  /** Whether every page the batch touches is in the cache (the common case once a filter is warm). */
  private allHeld(batch: PositionBatch): boolean {
    const { size, hashes, shards, positions } = batch
    const { pagesPerShard, pageShift } = this
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
    const { cache, pagesPerShard, pageShift } = this
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
    await this.load([...missing])
    return true
  }

  private setInOrder(batch: PositionBatch, out: Uint8Array): number {
    const { size, hashes, shards, positions } = batch
    const { cache, counts, pagesPerShard, pageShift, pageBytes } = this
    const { slotOf, arena, referenced } = cache
    const byteMask = pageBytes - 1
    let added = 0
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      let fresh = 0
      for (const end = e + hashes; e < end; e++) {
        const position = positions[e]
        const slot = slotOf[base + (position >>> pageShift)]
        referenced[slot] = 1
        const index = slot * pageBytes + ((position >>> 3) & byteMask)
        const mask = 0x80 >>> (position & 7)
        const old = arena[index]
        if ((old & mask) === 0) {
          arena[index] = old | mask
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
  private setDirect(batch: PositionBatch, out: Uint8Array): number {
    const { size, hashes, shards, positions } = batch
    const { cache, counts, pageShift, pagesPerShard } = this
    const arena = cache.arena
    const stride = pagesPerShard * this.pageBytes
    let added = 0
    for (let i = 0, e = 0; i < size; i++) {
      const shard = shards[i]
      const base = shard * stride
      let fresh = 0
      for (const end = e + hashes; e < end; e++) {
        const position = positions[e]
        const index = base + (position >>> 3)
        const mask = 0x80 >>> (position & 7)
        const old = arena[index]
        if ((old & mask) === 0) {
          arena[index] = old | mask
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
    const { size, hashes, shards, positions } = batch
    const arena = this.cache.arena
    const stride = this.pagesPerShard * this.pageBytes
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * stride
      let found = 1
      for (const end = e + hashes; e < end; e++) {
        const position = positions[e]
        if ((arena[base + (position >>> 3)] & (0x80 >>> (position & 7))) === 0) {
          found = 0
          e = end
          break
        }
      }
      out[i] = found
    }
  }

  /** Tests key by key; returns false, with `out` incomplete, at the first page that is not held. */
  private testInOrder(batch: PositionBatch, out: Uint8Array): boolean {
    const { size, hashes, shards, positions } = batch
    const { slotOf, arena, referenced } = this.cache
    const { pagesPerShard, pageShift, pageBytes } = this
    const byteMask = pageBytes - 1
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      let found = 1
      for (const end = e + hashes; e < end; e++) {
        const position = positions[e]
        const slot = slotOf[base + (position >>> pageShift)]
        if (slot < 0) return false
        referenced[slot] = 1
        if ((arena[slot * pageBytes + ((position >>> 3) & byteMask)] & (0x80 >>> (position & 7))) === 0) {
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
  private async applySorted(batch: PositionBatch, out: Uint8Array, set: boolean): Promise<number> {
    const { size, hashes, shards, positions } = batch
    const entries = size * hashes
    const order = this.orderEntries(batch)
    const pageOf = this.entryPage
    out.fill(set ? 0 : 1, 0, size)
    const { cache, counts, pageBytes } = this
    const arena = cache.arena
    const byteMask = pageBytes - 1
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
        if (pages === this.stepPages) break
        pages++
        last = page
        const slot = cache.slotOf[page]
        if (slot >= 0) cache.pin(slot)
        else need.push(page)
      }
      if (need.length > 0) await this.load(need)
      for (let j = a; j < b; j++) {
        const e = order[j]
        const i = (e / hashes) | 0
        const slot = cache.slotOf[pageOf[e]]
        const position = positions[e]
        const index = slot * pageBytes + ((position >>> 3) & byteMask)
        const mask = 0x80 >>> (position & 7)
        const old = arena[index]
        if (set) {
          if ((old & mask) === 0) {
            arena[index] = old | mask
            cache.markDirty(slot)
            if (out[i] === 0) added++
            out[i] = 1
            if (counts !== undefined) counts[shards[i]]++
          }
        } else if ((old & mask) === 0) {
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
    const { order, entryPage, pagesPerShard, pageShift } = this
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


  /** The shards and positions of the keys `out` marks new, for the log. */
  private newKeys(batch: PositionBatch, out: Uint8Array, added: number): [Uint32Array, Uint32Array] {
    const { size, hashes } = batch
    if (added === size) return [batch.shards.subarray(0, size), batch.positions.subarray(0, size * hashes)]
    const shards = new Uint32Array(added)
    const positions = new Uint32Array(added * hashes)
    for (let i = 0, n = 0, p = 0; i < size; i++) {
      if (out[i] === 0) continue
      shards[n++] = batch.shards[i]
      for (let from = i * hashes, end = from + hashes; from < end; from++) positions[p++] = batch.positions[from]
    }
    return [shards, positions]
  }

  /** Loads pages (numbers not held) into slots freed by CLOCK, writing dirty victims first in one batch. */
  private async load(pages: number[]): Promise<void> {
    const { cache } = this
    const victims = cache.chooseVictims(pages.length, pages)
    const writes: { type: 'put'; key: string; value: Uint8Array }[] = []
    for (const slot of victims) {
      if (cache.dirty[slot] === 1) writes.push({ type: 'put', key: this.keyOf(cache.pageOf[slot]), value: encodePage(cache.view(slot)) })
    }
    const [values] = await Promise.all([
      // fillCache: false, since the page cache holds what was read; LevelDB's block cache would double it.
      this.db.getMany(pages.map((page) => this.keyOf(page)), { fillCache: false }),
      writes.length > 0 ? this.db.batch(writes, { sync: this.sync }) : undefined,
    ])
    for (const slot of victims) cache.markClean(slot)
    for (let j = 0; j < pages.length; j++) {
      const page = pages[j]
      const value = values[j]
      const shard = Math.floor(page / this.pagesPerShard)
      const index = page - shard * this.pagesPerShard
      const length = this.pageLength(index)
      const bytes = value === undefined ? undefined : decodePage(this.location, shard, index, length, value)
      cache.install(victims[j], page, length, bytes)
    }
  }

  /** Visits bytes [offset, offset + length) of a shard page by page, a cacheful of pages at a time. */
  private async forRange(
    shard: number,
    offset: number,
    length: number,
    visit: (page: Uint8Array, from: number, at: number, n: number, slot: number) => void,
  ): Promise<void> {
    if (length === 0) return
    const first = Math.floor(offset / this.pageBytes)
    const last = Math.floor((offset + length - 1) / this.pageBytes)
    const { cache } = this
    for (let start = first; start <= last; start += this.stepPages) {
      const end = Math.min(last, start + this.stepPages - 1)
      cache.beginStep()
      const need: number[] = []
      for (let index = start; index <= end; index++) {
        const page = shard * this.pagesPerShard + index
        const slot = cache.slotOf[page]
        if (slot >= 0) cache.pin(slot)
        else need.push(page)
      }
      if (need.length > 0) await this.load(need)
      for (let index = start; index <= end; index++) {
        const slot = cache.slotOf[shard * this.pagesPerShard + index]
        const pageStart = index * this.pageBytes
        const from = Math.max(offset, pageStart)
        const to = Math.min(offset + length, pageStart + this.pageBytes)
        visit(cache.view(slot), from - pageStart, from - offset, to - from, slot)
      }
    }
  }

  /**
   * Writes every dirty page (in batches of a few MiB, so memory stays bounded) and then deletes the
   * log records they cover in one batch. Pages go first: until the log is deleted, a crash replays
   * it onto whatever pages made it, and setting bits twice is harmless. Checkpoint writes are
   * always fsynced, whatever `sync` says: they are rare (one per `checkpointBytes` of log), and
   * deleting log records whose pages an OS crash could still lose would lose keys.
   */
  private async checkpoint(always: boolean): Promise<void> {
    if (!always && !this.checkpointDue()) return
    await this.settlePending()
    const { cache } = this
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
      ops.push({ type: 'put', key: this.keyOf(cache.pageOf[slot]), value: encodePage(cache.view(slot)) })
      written.push(slot)
      bytes += this.pageBytes
      if (bytes >= WRITE_BATCH_BYTES) await flush()
    }
    await flush()
    const last: ({ type: 'del'; key: string } | { type: 'put'; key: string; value: Uint8Array })[] = []
    for (let seq = this.firstSeq; seq < this.nextSeq; seq++) last.push({ type: 'del', key: logKey(seq) })
    // The counts go with the log's deletion: a counts record is trusted only when no log is left.
    if (this.countsChanged) {
      last.push(this.counts === undefined ? { type: 'del', key: COUNTS_KEY } : { type: 'put', key: COUNTS_KEY, value: encodeCounts(this.counts) })
    }
    if (last.length > 0) {
      await this.db.batch(last, { sync: true })
      this.firstSeq = this.nextSeq
      this.countsChanged = false
    }
    this.logBytes = 0
  }

  /** Applies log records a crash left behind (in order), then checkpoints so they are not replayed twice. */
  private async replay(): Promise<void> {
    let first = -1
    let last = -1
    for await (const [key, value] of this.db.iterator(LOG_RANGE)) {
      const seq = parseLogKey(key)
      const record = decodeLogRecord(this.location, seq, value)
      this.checkLogRecord(seq, record)
      const batch = { size: record.count, hashes: record.hashes, shards: record.shards, positions: record.positions } as PositionBatch
      await this.apply(batch, new Uint8Array(record.count), true)
      if (first < 0) first = seq
      last = seq
      this.logBytes += value.length
    }
    if (first < 0) {
      // Nothing to replay: the counts stored at the last checkpoint describe the pages exactly.
      const stored = await this.db.get(COUNTS_KEY)
      if (stored !== undefined) this.counts = decodeCounts(this.location, this.parameters.shards, stored)
      return
    }
    this.firstSeq = first
    this.nextSeq = last + 1
    // Replayed bits may already be in pages written after the stored counts: drop them (rescanned on demand).
    this.countsChanged = true
    await this.checkpoint(true)
  }

  /** A record that passed its CRC but does not fit this filter would index outside the pages: refuse it. */
  private checkLogRecord(seq: number, record: LogRecord): void {
    const { hashes, shards } = this.parameters
    const shardBits = this.shardBytes * 8
    const bad = (why: string) => new BloomError('BLOOM_CORRUPT_STORE', `${this.location}: log record ${seq} ${why}`)
    if (record.hashes !== hashes) throw bad(`has ${record.hashes} hashes per key, the filter ${hashes}`)
    for (let i = 0; i < record.count; i++) if (record.shards[i] >= shards) throw bad(`names shard ${record.shards[i]} of ${shards}`)
    for (let i = 0; i < record.positions.length; i++) if (record.positions[i] >= shardBits) throw bad(`names bit ${record.positions[i]} of ${shardBits}`)
  }

  /** Set bits per shard: held pages from the cache, the rest streamed from LevelDB one page at a time. */
  private async scanCounts(): Promise<Float64Array> {
    const counts = new Float64Array(this.parameters.shards)
    const { cache } = this
    for (let slot = 0; slot < cache.capacity; slot++) {
      const page = cache.pageOf[slot]
      if (page >= 0) counts[Math.floor(page / this.pagesPerShard)] += popcount(cache.view(slot))
    }
    for await (const [key, value] of this.db.iterator(PAGE_RANGE)) {
      const { shard, page } = parsePageKey(key)
      if (cache.slotOf[shard * this.pagesPerShard + page] >= 0) continue
      counts[shard] += popcount(decodePage(this.location, shard, page, this.pageLength(page), value))
    }
    return counts
  }

  private keyOf(page: number): string {
    const shard = Math.floor(page / this.pagesPerShard)
    return pageKey(shard, page - shard * this.pagesPerShard)
  }

  /** Bytes of page `index` of a shard: the last page of a shard may be short. */
  private pageLength(index: number): number {
    return Math.min(this.pageBytes, this.shardBytes - index * this.pageBytes)
  }
}

function checkStoreOptions(options: LevelStoreOptions): void {
  if (options === null || typeof options !== 'object') throw new BloomError('BLOOM_INVALID_PARAMETER', `options must be an object; got ${String(options)}`)
  checkSync(options.sync)
  checkOption('cacheBytes', options.cacheBytes, 1, MAX_CACHE_BYTES, DEFAULT_CACHE_BYTES)
  checkOption('checkpointBytes', options.checkpointBytes, 65_536, Number.MAX_SAFE_INTEGER, DEFAULT_CHECKPOINT_BYTES)
}

/**
 * Asserts that the filter has at most 2^24 pages of `pageBytes`.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `pageBytes`.
 */
export function checkPageTable(parameters: FilterParameters, pageBytes: number): void {
  const pages = parameters.shards * Math.ceil(shardBytesOf(parameters) / pageBytes)
  if (pages > MAX_PAGES) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `pageBytes must be large enough for at most ${MAX_PAGES} pages; ${pageBytes} gives ${pages} for ${parameters.bits} bits`)
  }
}

/**
 * The metadata record, or undefined for an empty database.
 * @throws BloomError `BLOOM_CORRUPT_STORE` when the database holds other data or an unfinished
 *   import, `BLOOM_NOT_FOUND` when it is empty and `required`.
 */
export async function readMetadata(location: string, db: Database, required: boolean): Promise<Metadata | undefined> {
  const value = await db.get(META_KEY)
  if (value !== undefined) return decodeMetadata(location, value)
  if ((await db.get(IMPORTING_KEY)) !== undefined) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${location}: an import into this folder did not finish; delete it and import again`)
  }
  for await (const key of db.keys({ limit: 1 })) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${location} is not a bloomkit filter: it holds other data (first key ${JSON.stringify(key.slice(0, 40))})`)
  }
  if (required) throw new BloomError('BLOOM_NOT_FOUND', `${location}: no bloomkit filter here (the database is empty)`)
  return undefined
}
