import { BloomError, type FilterParameters, type FilterParametersInput } from '@bloomkit/core'
import { type BitStoreCapabilities, checkParameters, counterKernels, type CounterMode, counterShardBytesOf, type CounterStore, type PositionBatch, type SnapshotSource } from '@bloomkit/core/store'
import { existingAnchor, newAnchor, type SequenceAnchor } from '../folder/sequence-anchor.js'
import { canonicalLocation, closeDatabase, openDatabase, type Database } from '../folder/database.js'
import { storeError } from '../errors.js'
import type { FilterDatabase } from '../folder/stored-kind.js'
import { importSnapshot } from '../folder/import.js'
import { COUNTING_METADATA, decodeMetadata, encodeMetadata, readMetadata, type Metadata } from '../folder/metadata.js'
import { Mutex } from '../mutex.js'
import { adoptFolder, checkAdoptable, type Opened, replayLog, writeFirstRecords } from '../folder/open-folder.js'
import { checkPageTable, checkStoreOptions, pageBytesOf, type LevelCreateStoreOptions, type LevelStoreOptions, type StoreSettings } from '../options.js'
import { PageCache } from '../pages/page-cache.js'
import { PageGeometry } from '../pages/page-geometry.js'
import { PageIO } from '../pages/page-io.js'
import { PageVersions } from '../folder/page-versions.js'
import { bitRecordDeletions, CHECKPOINT_KEY, COUNTING_META_KEY, encodeCheckpoint, encodePage, encodePageLogRecord, logKey, META_KEY } from '../folder/records.js'
import { checkpointOps, readPageLog } from '../folder/write-ahead-log.js'

const { addCounters, counterBatch, countCounters } = counterKernels

/**
 * Log bytes after which a checkpoint stores the page versions and deletes the log (it also runs at
 * close), unless `checkpointBytes` says otherwise: a counting log record names pages, not keys, so
 * 1 MiB of it covers thousands of batches.
 */
const DEFAULT_CHECKPOINT_BYTES = 2 ** 20

/**
 * A counting filter's counters in a LevelDB folder (IndexedDB in browsers), with a plain folder's
 * durability: the counters in pages that carry a version and a CRC-32, the page versions, a log
 * numbered without gaps and (in Node) the anchor file (records.ts, page-versions.ts, anchor.ts).
 * Every batch writes the pages it changed and a log record naming them at their new versions in one
 * atomic LevelDB batch, so a key's counters change together or not at all, and a checkpoint folds
 * the log into the stored page versions. So what LevelDB loses is found, as in a plain folder: a
 * page older than its version, or missing, is `BLOOM_DATA_LOST` when read; a gap in the log, or a
 * log ending before the anchor, is `BLOOM_DATA_LOST` at open. Every operation runs under one mutex
 * (LevelDB's lock keeps other processes out), and pages stay in memory once read.
 */
export class LevelCounterStore implements CounterStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: false }
  readonly parameters: FilterParameters
  readonly counterBits = 4
  /** The folder (absolute path) or, in browsers, the IndexedDB name. */
  readonly location: string
  /** Whether writes fsync LevelDB's log. */
  readonly sync: boolean
  private readonly checkpointBytes: number
  private readonly db: Database
  private readonly anchor: SequenceAnchor | undefined
  private readonly mutex = new Mutex()
  private readonly geometry: PageGeometry
  /** Every page, each in its own slot: the arena is laid out like the counters, shard after shard. */
  private readonly cache: PageCache
  private readonly io: PageIO
  private readonly versions: PageVersions
  /** Bytes from one shard's counters to the next in the arena. */
  private readonly stride: number
  /** `position >>> counterShift` is a counter's page within its shard (two counters a byte). */
  private readonly counterShift: number
  /** Scratch: page → 1 while a batch's pages are gathered. */
  private readonly marks: Uint8Array
  /** The first log record not yet folded into the stored page versions. */
  private firstSeq = 0
  /** The next log record's sequence number. */
  private nextSeq = 0
  /** The log start the stored checkpoint record holds. */
  private storedLogStart = 0
  private logBytes = 0
  private closed = false

  private constructor(location: string, db: Database, { meta, anchor }: Opened, settings: StoreSettings) {
    this.location = location
    this.sync = settings.sync
    this.checkpointBytes = settings.checkpointBytes
    this.db = db
    this.anchor = anchor
    this.parameters = meta.parameters
    this.geometry = new PageGeometry(meta.parameters, meta.pageBytes, { shardBytes: counterShardBytesOf(meta.parameters) })
    const { pages, pageBytes, pagesPerShard } = this.geometry
    this.cache = new PageCache(pages, pages, pageBytes)
    this.versions = new PageVersions(pages)
    this.io = new PageIO({ location, db, cache: this.cache, geometry: this.geometry, versions: this.versions, sync: this.sync })
    this.stride = pagesPerShard * pageBytes
    this.counterShift = Math.log2(pageBytes * 2)
    this.marks = new Uint8Array(pages)
  }

  /**
   * A new counting filter in `location`, or the one there if it has the same parameters (the seed
   * aside when `seeded` is false), or of one of the `earlier` sizes, kept as it is. Of the store
   * options, `pageBytes`, `sync` and `checkpointBytes` apply; the counters are held in memory once read.
   * @throws BloomError `BLOOM_INCOMPATIBLE` (a plain filter or other parameters there), `BLOOM_DATA_LOST`
   *   (LevelDB lost the filter's records there), `BLOOM_CORRUPT_STORE`, `BLOOM_LOCKED`, …
   */
  static async create(
    location: string,
    input: FilterParametersInput,
    options: LevelCreateStoreOptions = {},
    { seeded = true, earlier = [] }: { readonly seeded?: boolean; readonly earlier?: readonly FilterParameters[] } = {},
  ): Promise<LevelCounterStore> {
    const parameters = checkParameters(input)
    const pageBytes = pageBytesOf(options)
    checkPageTable(parameters, pageBytes, { shardBytes: counterShardBytesOf(parameters) })
    const settings = counterSettings(options)
    const where = canonicalLocation(location)
    const db = await openDatabase(where, { create: true })
    return LevelCounterStore.adopt(where, db, 'cannot be created', async () => {
      const stored = await db.get(COUNTING_META_KEY)
      if (stored !== undefined) {
        const existing = decodeMetadata(where, stored, COUNTING_METADATA)
        checkAdoptable(where, { parameters, seeded, earlier }, existing.parameters)
        return { meta: existing, anchor: existingAnchor(where) }
      }
      await refusePlain(where, db)
      // Nothing else may be there (another application's data, an unfinished import).
      await readMetadata(where, db, { required: false })
      const meta: Metadata = { parameters, pageBytes }
      return { meta, anchor: await writeFirstRecords(where, db, [{ type: 'put', key: COUNTING_META_KEY, value: encodeMetadata(meta, COUNTING_METADATA) }]) }
    }, settings)
  }

  /**
   * The counting filter in `location`; checks the log and the anchor.
   * @throws BloomError `BLOOM_INCOMPATIBLE` for a plain filter's folder, `BLOOM_NOT_FOUND`, `BLOOM_DATA_LOST`,
   *   `BLOOM_CORRUPT_STORE`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(location: string, options: LevelStoreOptions = {}): Promise<LevelCounterStore> {
    const settings = counterSettings(options)
    const where = canonicalLocation(location)
    const db = await openDatabase(where, { create: false })
    return LevelCounterStore.adopt(where, db, 'cannot be opened', async () => {
      const stored = await db.get(COUNTING_META_KEY)
      if (stored === undefined) {
        // No counting record: a plain filter's folder, one whose records LevelDB lost, or none.
        await refusePlain(where, db)
        newAnchor(where, { create: false })
        await readMetadata(where, db, { required: true })
      }
      return { meta: decodeMetadata(where, stored!, COUNTING_METADATA), anchor: existingAnchor(where) }
    }, settings)
  }

  /** The store over a counting filter's database `LevelBloomFilter.open` opened and read (stored-kind.ts), without a second open. */
  static inFolder({ where, db, meta }: FilterDatabase, options: LevelStoreOptions): Promise<LevelCounterStore> {
    return LevelCounterStore.adopt(where, db, 'cannot be opened', async () => ({ meta, anchor: existingAnchor(where) }), counterSettings(options))
  }

  /**
   * A new counting filter in `location` (a new or empty folder) from a counting snapshot (format
   * version 3), streamed page by page as a plain import is (import.ts): nothing becomes visible
   * unless the whole snapshot checks out, and a failed import leaves no folder it created.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION` (a plain snapshot), …
   */
  static async import(location: string, snapshot: SnapshotSource, options: LevelCreateStoreOptions = {}): Promise<LevelCounterStore> {
    const pageBytes = pageBytesOf(options)
    const settings = counterSettings(options)
    const where = canonicalLocation(location)
    const { db, meta, anchor } = await importSnapshot(where, snapshot, { pageBytes, kind: 'counting' })
    return LevelCounterStore.adopt(where, db, 'cannot be imported into', async () => ({ meta, anchor }), settings)
  }

  /** Wraps an open database holding (once `prepare` resolves) a counting filter, and checks its log; closes the database on failure. */
  private static async adopt(where: string, db: Database, doing: string, prepare: () => Promise<Opened>, settings: StoreSettings): Promise<LevelCounterStore> {
    return adoptFolder(where, db, doing, prepare, async (opened) => {
      const store = new LevelCounterStore(where, db, opened, settings)
      await store.mutex.run(() => store.replay())
      return store
    })
  }

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('increment', batch, out)
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('test', batch, out)
  }

  removeBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('decrement', batch, out)
  }

  countBits(): Promise<number[]> {
    return this.locked('failed a read', async () => {
      const counts: number[] = []
      for (let shard = 0; shard < this.parameters.shards; shard++) counts.push((await this.countShard(shard)).nonZero)
      return counts
    })
  }

  countSaturated(): Promise<number> {
    return this.locked('failed a read', async () => {
      let saturated = 0
      for (let shard = 0; shard < this.parameters.shards; shard++) saturated += (await this.countShard(shard)).saturated
      return saturated
    })
  }

  readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    return this.locked('failed a read', async () => {
      await this.loadRange(shard, offset, length)
      const at = shard * this.stride + offset
      return this.cache.arena.slice(at, at + length)
    })
  }

  writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.change(shard, offset, bytes.length, (arena, at) => arena.set(bytes, at))
  }

  /** Adds counters (capped at 15): merge. */
  orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.change(shard, offset, bytes.length, (arena, at) => addCounters(arena, at, bytes))
  }

  /** Deletes every page and the log in one fsynced batch, as a plain store's clear does: a crash leaves the filter cleared or untouched. */
  clear(): Promise<void> {
    return this.locked('failed a write', async () => {
      const next = this.nextSeq + 1
      await this.db.batch([...(await bitRecordDeletions(this.db)), { type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint(next) }], { sync: true })
      this.cache.reset()
      this.versions.reset()
      this.nextSeq = this.firstSeq = this.storedLogStart = next
      this.logBytes = 0
      this.anchor?.advance(next, { durable: true })
    })
  }

  /** Folds the log into the stored page versions and closes the folder. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.mutex.run(async () => {
      try {
        await this.checkpoint()
      } finally {
        this.anchor?.close()
        await closeDatabase(this.location, this.db)
      }
    }).catch((error: unknown) => {
      throw storeError(this.location, 'cannot be closed cleanly (the log is kept and checked at the next open)', error)
    })
  }

  private run(mode: CounterMode, batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.locked(mode === 'test' ? 'failed a read' : 'failed a write', async () => {
      const pages = this.pagesOf(batch)
      await this.load(pages)
      counterBatch(this.cache.arena, this.stride, batch, out, mode)
      // A remove that found no key present changed nothing.
      if (mode === 'increment' || (mode === 'decrement' && out.subarray(0, batch.size).includes(1))) await this.persist(pages)
    })
  }

  /** The pages a batch's counters are on, each once. */
  private pagesOf({ shards, positions, hashes, size }: PositionBatch): number[] {
    const { marks, counterShift } = this
    const { pagesPerShard } = this.geometry
    const pages: number[] = []
    for (let i = 0, e = 0; i < size; i++) {
      const base = shards[i] * pagesPerShard
      for (const end = e + hashes; e < end; e++) {
        const page = base + (positions[e] >>> counterShift)
        if (marks[page] === 0) {
          marks[page] = 1
          pages.push(page)
        }
      }
    }
    for (const page of pages) marks[page] = 0
    return pages
  }

  /** Loads the pages not held yet, a few MiB at a time, each checked against its CRC-32 and version. */
  private async load(pages: readonly number[]): Promise<void> {
    const missing = pages.filter((page) => this.cache.slotOf[page] < 0)
    for (let at = 0; at < missing.length; at += this.io.stepPages) {
      this.cache.beginStep()
      await this.io.load(missing.slice(at, at + this.io.stepPages))
    }
  }

  /** The pages holding bytes [offset, offset + length) of a shard's counters. */
  private pagesOfRange(shard: number, offset: number, length: number): number[] {
    const { pageBytes, pagesPerShard } = this.geometry
    const pages: number[] = []
    for (let index = Math.floor(offset / pageBytes); index * pageBytes < offset + length; index++) pages.push(shard * pagesPerShard + index)
    return pages
  }

  private loadRange(shard: number, offset: number, length: number): Promise<void> {
    return this.load(this.pagesOfRange(shard, offset, length))
  }

  private async countShard(shard: number): Promise<{ nonZero: number; saturated: number }> {
    const { shardBytes } = this.geometry
    await this.loadRange(shard, 0, shardBytes)
    return countCounters(this.cache.arena, shard * this.stride, shard * this.stride + shardBytes)
  }

  private change(shard: number, offset: number, length: number, edit: (arena: Uint8Array, at: number) => void): Promise<void> {
    return this.locked('failed a write', async () => {
      const pages = this.pagesOfRange(shard, offset, length)
      await this.load(pages)
      edit(this.cache.arena, shard * this.stride + offset)
      await this.persist(pages)
    })
  }

  /**
   * Writes the pages, each at its next version, with the log record naming them, in one atomic
   * batch; then the anchor follows (never ahead of LevelDB). On failure the versions go back and
   * every page is forgotten, so nothing unwritten is read back.
   */
  private async persist(pages: readonly number[]): Promise<void> {
    const seq = this.nextSeq
    const before = pages.map((page) => this.versions.table[page])
    const written = pages.map((page) => this.versions.next(page))
    const record = encodePageLogRecord(pages, written)
    const ops = pages.map((page, i) => ({ type: 'put' as const, key: this.geometry.keyOf(page), value: encodePage(this.cache.view(page), written[i]) }))
    try {
      await this.db.batch([...ops, { type: 'put', key: logKey(seq), value: record }], { sync: this.sync })
    } catch (error) {
      pages.forEach((page, i) => this.versions.revert(page, before[i]))
      this.cache.reset()
      throw error
    }
    this.nextSeq = seq + 1
    this.logBytes += record.length
    this.anchor?.advance(this.nextSeq)
    if (this.logBytes >= this.checkpointBytes) await this.checkpoint()
  }

  /** Stores the page versions the log records since the last checkpoint, and deletes those records, in one fsynced batch. */
  private async checkpoint(): Promise<void> {
    const versions = this.versions.takeChanges()
    const ops = [...checkpointOps(this.firstSeq, this.nextSeq, this.storedLogStart), ...versions]
    if (ops.length > 0) {
      try {
        await this.db.batch(ops, { sync: true })
      } catch (error) {
        this.versions.restore(versions)
        throw error
      }
      this.firstSeq = this.storedLogStart = this.nextSeq
    }
    this.anchor?.advance(this.nextSeq, { durable: true })
    this.logBytes = 0
  }

  /**
   * Checks the log ({@link replayLog}: no gap, not ending before the anchor) and takes on the page
   * versions it records, then checkpoints them.
   * @throws BloomError as {@link replayLog}.
   */
  private async replay(): Promise<void> {
    const records = readPageLog(this.location, this.db, this.geometry.pages)
    const { logStart, next, logBytes } = await replayLog({ location: this.location, db: this.db, versions: this.versions, anchor: this.anchor, records, apply: ({ record }) => {
      for (let i = 0; i < record.pages.length; i++) this.versions.record(record.pages[i], record.versions[i])
    } })
    this.firstSeq = this.storedLogStart = logStart
    this.nextSeq = next
    this.logBytes = logBytes
    await this.checkpoint()
  }

  private locked<T>(doing: string, section: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new BloomError('BLOOM_CLOSED', `the store at ${this.location} is closed`))
    return this.mutex.run(section).catch((error: unknown) => {
      throw storeError(this.location, doing, error)
    })
  }
}

/** The store options a counting store takes, checked, with its own default for `checkpointBytes`. */
function counterSettings(options: LevelStoreOptions): StoreSettings {
  const settings = checkStoreOptions(options)
  return options.checkpointBytes === undefined ? { ...settings, checkpointBytes: DEFAULT_CHECKPOINT_BYTES } : settings
}

/**
 * Refuses a folder without a counting record that holds a plain filter.
 * @throws BloomError `BLOOM_INCOMPATIBLE`.
 */
async function refusePlain(where: string, db: Database): Promise<void> {
  if ((await db.get(META_KEY)) !== undefined) throw new BloomError('BLOOM_INCOMPATIBLE', `${where} holds a plain filter, not a counting one: open it with LevelBloomFilter.open`)
}
