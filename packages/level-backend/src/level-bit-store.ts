import { BloomError, type FilterParameters, type FilterParametersInput } from '@bloomkit/core'
import { checkParameters, orInto, SET_BITS, TEST_BITS, type BitStore, type BitStoreCapabilities, type PositionBatch } from '@bloomkit/core/store'
import { existingAnchor, type SequenceAnchor } from './folder/sequence-anchor.js'
import type { FilterDatabase } from './folder/stored-kind.js'
import { BatchApplier } from './pages/batch-apply.js'
import { canonicalLocation, closeDatabase, openDatabase, type Database } from './folder/database.js'
import { storeError } from './errors.js'
import { importSnapshot, type SnapshotSource } from './folder/import.js'
import { InFlight } from './in-flight.js'
import { readMetadata, requireMetadata } from './folder/metadata.js'
import { Mutex } from './mutex.js'
import { adoptFolder, checkAdoptable, initializeFolder, type Opened, replayLog } from './folder/open-folder.js'
import { cachePages, checkCacheForNewPages, checkLevelOptions, checkPageTable, checkStoreOptions, pageBytesOf, type LevelCreateStoreOptions, type LevelStoreOptions, type StoreSettings } from './options.js'
import { PageCache } from './pages/page-cache.js'
import { PageGeometry } from './pages/page-geometry.js'
import { PageIO } from './pages/page-io.js'
import { PageVersions } from './folder/page-versions.js'
import { bitRecordDeletions, CHECKPOINT_KEY, COUNTS_KEY, decodeCounts, encodeCheckpoint, encodeCounts, encodeLogRecord, logKey } from './folder/records.js'
import { checkpointOps, newKeys, readLog, type LoggedBatch } from './folder/write-ahead-log.js'

/** LevelBitStore's private adopt, shared by its static block with {@link bitStoreInFolder}. */
let adoptRead: (folder: FilterDatabase, settings: StoreSettings) => Promise<LevelBitStore>

/** The store over a fixed filter's database `LevelBloomFilter.open` opened and read (stored-kind.ts), without a second open. Package-internal. */
export const bitStoreInFolder = (folder: FilterDatabase, options: LevelStoreOptions): Promise<LevelBitStore> => adoptRead(folder, checkStoreOptions(options))

/**
 * A BitStore in a LevelDB folder (IndexedDB in browsers): the bits in pages, a bounded page cache,
 * and a log of the keys each `setBits` made new, so that a resolved add costs one small write.
 * Records LevelDB loses are found, not read as zeros: pages carry versions, the log's records are
 * numbered without gaps, and (in Node) an anchor file outside LevelDB says how far they reach.
 * See the package README for the folder format and what each durability mode survives.
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
  private readonly pages: PageIO
  private readonly versions: PageVersions
  private readonly applier: BatchApplier
  private readonly anchor: SequenceAnchor | undefined
  private readonly mutex = new Mutex()
  private readonly shardBytes: number
  private readonly checkpointBytes: number
  /** Set bits per shard, kept up to date once known; undefined until scanned or after writeShard/orShard. */
  private counts: Float64Array | undefined
  /** Whether the stored counts record may differ from `counts` (rewritten or deleted at the next checkpoint). */
  private countsChanged = false
  /** The first log record not yet folded into pages (and deleted by a checkpoint). */
  private firstSeq = 0
  /** The next sequence number: of the next log record, or taken by a merge or clear. */
  private nextSeq = 0
  /** The log start the stored checkpoint record holds. */
  private storedLogStart = 0
  /** Set when a log record failed to be written: the next write checkpoints, so no gap is left in the log. */
  private logGap = false
  private logBytes = 0
  /** Log records written outside the mutex, waited for before a checkpoint or clear. */
  private readonly inFlight = new InFlight()
  /** Set by close(): new calls fail with BLOOM_CLOSED. */
  private closing: Promise<void> | undefined
  /** Set once the database is closed: calls queued before close() finish first, later ones fail. */
  private dbClosed = false

  /**
   * A new, empty store in `location`, or the existing one there if it has the same parameters (the
   * seed aside when `seeded` is false: a `create` without a seed opens the stored filter with its seed),
   * or of one of the `earlier` sizes (what an earlier release's sizing gave the same options), kept as it is.
   * @throws BloomError `BLOOM_INCOMPATIBLE` when the folder holds a filter with other parameters,
   *   `BLOOM_CORRUPT_STORE` when it holds something else or is damaged, `BLOOM_DATA_LOST` when
   *   LevelDB lost records of the filter there, `BLOOM_LOCKED`, `BLOOM_INVALID_PARAMETER`,
   *   `BLOOM_STORE_UNAVAILABLE`.
   */
  static async create(
    location: string,
    parameters: FilterParametersInput,
    options: LevelCreateStoreOptions = {},
    { seeded = true, earlier = [] }: { readonly seeded?: boolean; readonly earlier?: readonly FilterParameters[] } = {},
  ): Promise<LevelBitStore> {
    checkLevelOptions('LevelBitStore.create', options)
    const checked = checkParameters(parameters)
    const pageBytes = pageBytesOf(options)
    checkPageTable(checked, pageBytes)
    checkCacheForNewPages(options)
    const settings = checkStoreOptions(options)
    const where = canonicalLocation(location)
    const db = await openDatabase(where, { create: true })
    return LevelBitStore.adopt(where, db, 'cannot be created', async () => {
      const existing = await readMetadata(where, db, { required: false })
      if (existing === undefined) return initializeFolder(where, db, { parameters: checked, pageBytes })
      checkAdoptable(where, { parameters: checked, seeded, earlier }, existing.parameters)
      return { meta: existing, anchor: existingAnchor(where) }
    }, settings)
  }

  /**
   * The store in `location`, with the parameters stored there; replays any log left by a crash.
   * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_STORE`, `BLOOM_DATA_LOST` (LevelDB lost
   *   records: a gap in the log, or records ending before the anchor), `BLOOM_LOCKED`,
   *   `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async open(location: string, options: LevelStoreOptions = {}): Promise<LevelBitStore> {
    checkLevelOptions('LevelBitStore.open', options)
    const settings = checkStoreOptions(options)
    const where = canonicalLocation(location)
    const db = await openDatabase(where, { create: false })
    return LevelBitStore.adopt(where, db, 'cannot be opened', async () => ({ meta: await requireMetadata(where, db), anchor: existingAnchor(where) }), settings)
  }

  // A static block may reach the class's privates: so bitStoreInFolder can, and the class keeps no public door for it.
  static {
    adoptRead = ({ where, db, meta }, settings) => LevelBitStore.adopt(where, db, 'cannot be opened', async () => ({ meta, anchor: existingAnchor(where) }), settings)
  }

  /**
   * A new store in `location` (a new or empty folder) from a snapshot, streamed page by page.
   * Nothing becomes visible unless the whole snapshot checks out.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INVALID_PARAMETER`
   *   (the folder already holds a filter), `BLOOM_CORRUPT_STORE`, `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
   */
  static async import(location: string, snapshot: SnapshotSource, options: LevelCreateStoreOptions = {}): Promise<LevelBitStore> {
    checkLevelOptions('LevelBitStore.import', options)
    const pageBytes = pageBytesOf(options)
    checkCacheForNewPages(options)
    const settings = checkStoreOptions(options)
    const where = canonicalLocation(location)
    const { db, meta, anchor } = await importSnapshot(where, snapshot, { pageBytes })
    return LevelBitStore.adopt(where, db, 'cannot be imported into', async () => ({ meta, anchor }), settings)
  }

  /** Wraps an open database holding (once `prepare` resolves) a filter, and replays its log; closes the database on failure. */
  private static async adopt(where: string, db: Database, doing: string, prepare: () => Promise<Opened>, settings: StoreSettings): Promise<LevelBitStore> {
    return adoptFolder(where, db, doing, prepare, async (opened) => {
      const store = new LevelBitStore(where, db, opened, settings)
      await store.mutex.run(() => store.replay())
      return store
    })
  }

  private constructor(location: string, db: Database, { meta, anchor }: Opened, settings: StoreSettings) {
    this.location = location
    this.db = db
    this.anchor = anchor
    this.parameters = meta.parameters
    this.pageBytes = meta.pageBytes
    this.sync = settings.sync
    this.checkpointBytes = settings.checkpointBytes
    const geometry = new PageGeometry(meta.parameters, meta.pageBytes)
    this.shardBytes = geometry.shardBytes
    this.cache = new PageCache(cachePages(settings.cacheBytes, this.pageBytes, geometry.pages), geometry.pages, this.pageBytes)
    this.versions = new PageVersions(geometry.pages)
    this.pages = new PageIO({ location, db, cache: this.cache, geometry, versions: this.versions, sync: this.sync })
    this.applier = new BatchApplier(this.pages)
  }

  /** Bytes of bits the page cache may hold. */
  get cacheBytes(): number {
    return this.cache.capacity * this.pageBytes
  }

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.write(async () => {
      const added = await this.applier.apply(batch, out, SET_BITS, this.counts)
      if (added === 0) return undefined
      this.countsChanged = true
      const record = encodeLogRecord(added, batch.hashes, ...newKeys(batch, out, added))
      const seq = this.nextSeq++
      this.logBytes += record.length
      // The anchor follows the record, never precedes it: a crash leaves it at or behind LevelDB.
      const written = this.db.put(logKey(seq), record, { sync: this.sync }).then(
        () => this.anchor?.advance(seq + 1),
        (error: unknown) => {
          this.logGap = true
          throw error
        },
      )
      this.inFlight.track(written)
      return { written }
    })
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.read(() => this.applier.apply(batch, out, TEST_BITS, undefined).then(() => undefined))
  }

  countBits(): Promise<number[]> {
    return this.read(async () => {
      if (this.counts === undefined) {
        this.counts = await this.pages.scanCounts(this.parameters.shards)
        this.countsChanged = true
      }
      return Array.from(this.counts)
    })
  }

  readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    return this.read(async () => {
      const out = new Uint8Array(length)
      await this.pages.forRange(shard, offset, length, (bytes, from, at, n) => out.set(bytes.subarray(from, from + n), at))
      return out
    })
  }

  writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.write(async () => {
      // Folds the log into pages first: replaying an older log record later would set bits this write
      // clears. The same checkpoint deletes the stored counts before any page changes.
      this.counts = undefined
      this.countsChanged = true
      await this.checkpoint()
      await this.pages.forRange(shard, offset, bytes.length, (page, from, at, n, slot) => {
        page.set(bytes.subarray(at, at + n), from)
        this.cache.markDirty(slot)
      })
      // No log record holds these bits: the write takes a sequence number, so the anchor covers it.
      this.nextSeq++
      await this.checkpoint()
      return undefined
    })
  }

  orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.write(async () => {
      if (this.counts !== undefined || this.countsChanged) {
        // The stored counts go before any page changes (a crash in between must not leave them trusted).
        this.counts = undefined
        this.countsChanged = true
        await this.checkpoint()
      }
      await this.pages.forRange(shard, offset, bytes.length, (page, from, at, n, slot) => {
        orInto(page, from, bytes.subarray(at, at + n))
        this.cache.markDirty(slot)
      })
      this.nextSeq++
      await this.checkpoint()
      return undefined
    })
  }

  clear(): Promise<void> {
    return this.write(async () => {
      await this.inFlight.settle()
      const ops = await bitRecordDeletions(this.db)
      const counts = new Float64Array(this.parameters.shards)
      const next = this.nextSeq + 1
      // One fsynced batch: a crash leaves the filter either cleared or untouched.
      await this.db.batch(
        [...ops, { type: 'put', key: COUNTS_KEY, value: encodeCounts(counts) }, { type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint(next) }],
        { sync: true },
      )
      this.cache.reset()
      this.versions.reset()
      this.counts = counts
      this.countsChanged = false
      this.nextSeq = this.firstSeq = this.storedLogStart = next
      this.logGap = false
      this.logBytes = 0
      this.anchor?.advance(next, { durable: true })
      return undefined
    })
  }

  /**
   * Writes every changed page and deletes the log, so that the next open replays nothing.
   * `close` does this too; call it to bound the work a crash leaves for the next open.
   */
  flush(): Promise<void> {
    return this.write(async () => {
      await this.checkpoint()
      return undefined
    })
  }

  close(): Promise<void> {
    this.closing ??= this.mutex.run(async () => {
      try {
        await this.checkpoint()
      } finally {
        this.dbClosed = true
        this.anchor?.close()
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
   * applied in memory while this one's log record is written. Then checkpoints if the log is due
   * (asked again under the mutex: another write may have checkpointed meanwhile).
   */
  private async write(section: () => Promise<{ written: Promise<unknown> } | undefined>): Promise<void> {
    this.checkOpen()
    try {
      const result = await this.mutex.run(() => {
        this.checkStillOpen()
        return section()
      })
      if (result !== undefined) await result.written
      if (this.checkpointDue()) await this.mutex.run(() => (this.dbClosed || !this.checkpointDue() ? Promise.resolve() : this.checkpoint()))
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
    return this.logGap || this.logBytes >= Math.max(this.checkpointBytes, (this.cache.dirtyCount * this.pageBytes) / 4)
  }

  /**
   * Writes every dirty page and then, in one batch, deletes the log records they cover, stores
   * the counts, the page versions that changed and where the log now starts. Pages go first:
   * until the log is deleted, a crash replays it onto whatever pages made it, and setting bits twice
   * is harmless; and a page batch LevelDB loses while it keeps the last batch shows as a page older
   * than its recorded version. Checkpoint writes are always fsynced, whatever `sync` says: they are
   * rare (one per `checkpointBytes` of log), and deleting log records whose pages an OS crash could
   * still lose would lose keys.
   */
  private async checkpoint(): Promise<void> {
    await this.inFlight.settle()
    await this.pages.writeDirty()
    const last = checkpointOps(this.firstSeq, this.nextSeq, this.storedLogStart)
    // The counts go with the log's deletion: a counts record is trusted only when no log is left.
    if (this.countsChanged) {
      last.push(this.counts === undefined ? { type: 'del', key: COUNTS_KEY } : { type: 'put', key: COUNTS_KEY, value: encodeCounts(this.counts) })
    }
    const versions = this.versions.takeChanges()
    last.push(...versions)
    if (last.length > 0) {
      try {
        await this.db.batch(last, { sync: true })
      } catch (error) {
        this.versions.restore(versions)
        throw error
      }
      this.firstSeq = this.storedLogStart = this.nextSeq
      this.countsChanged = false
      this.logGap = false
    }
    this.anchor?.advance(this.nextSeq, { durable: true })
    this.logBytes = 0
  }

  /**
   * Replays the log a crash left ({@link replayLog}), then checkpoints so it is not replayed twice.
   * @throws BloomError as {@link replayLog}.
   */
  private async replay(): Promise<void> {
    const records = readLog(this.location, this.db, this.parameters, this.shardBytes)
    const apply = ({ batch }: LoggedBatch) => this.applier.apply(batch, new Uint8Array(batch.size), SET_BITS, this.counts)
    const { logStart, next, logBytes } = await replayLog({ location: this.location, db: this.db, versions: this.versions, anchor: this.anchor, records, apply })
    this.logBytes += logBytes
    this.firstSeq = this.storedLogStart = logStart
    this.nextSeq = next
    if (next === logStart) {
      // Nothing to replay: the counts stored at the last checkpoint describe the pages exactly.
      const stored = await this.db.get(COUNTS_KEY)
      if (stored !== undefined) this.counts = decodeCounts(this.location, this.parameters.shards, stored)
      this.anchor?.advance(next, { durable: true })
      return
    }
    // Replayed bits may already be in pages written after the stored counts: drop them (rescanned on demand).
    this.countsChanged = true
    await this.checkpoint()
  }
}
