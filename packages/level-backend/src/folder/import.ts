import { BloomError, type FilterParameters } from '@bloomkit/core'
import { counterShardBytesOf, popcount, shardBytesOf, type SnapshotKind, type SnapshotSource, snapshotSources } from '@bloomkit/core/store'
import { newAnchor, type SequenceAnchor } from './sequence-anchor.js'
import { closeDatabase, locationIsNew, openDatabase, removeLocation, type Database } from './database.js'
import { storeError } from '../errors.js'
import { COUNTING_METADATA, encodeMetadata, readMetadata, type Metadata } from './metadata.js'
import { checkPageTable } from '../options.js'
import { PageGeometry } from '../pages/page-geometry.js'
import { CHUNK_PAGES } from './page-versions.js'
import { CHECKPOINT_KEY, COUNTS_KEY, encodeCheckpoint, encodeCounts, encodePage, encodeVersions, COUNTING_META_KEY, IMPORTING_KEY, META_KEY, pageKey, versionsKey } from './records.js'

const { snapshotChunks, snapshotReader } = snapshotSources

export type { SnapshotSource }

/** Bytes of pages per LevelDB batch while importing. */
const IMPORT_BATCH_BYTES = 4 * 2 ** 20

type Put = { type: 'put'; key: string; value: Uint8Array }

/**
 * Streams a snapshot into a new folder page by page (all-zero pages are skipped), holding one page,
 * one write batch and one chunk of page versions in memory, whatever the header declares: a plain
 * filter's snapshot (`kind` `'plain'`, pages of bits) or a counting one's (`'counting'`, pages of
 * counters). The pages are staged under an `importing` marker and the filter's record (`meta`, or
 * `counting`) is written only after the snapshot's length and CRC-32 check out, so a bad snapshot
 * never opens as a filter; on failure the staged pages are deleted (and the folder, if this call
 * created it). Resolves with the database still open, for the store to adopt.
 *
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INVALID_PARAMETER`
 *   (the folder already holds a filter), `BLOOM_CORRUPT_STORE` (it holds other data), `BLOOM_LOCKED`,
 *   `BLOOM_STORE_UNAVAILABLE`.
 */
export async function importSnapshot(
  where: string,
  source: SnapshotSource,
  { pageBytes, kind = 'plain' }: { readonly pageBytes: number; readonly kind?: SnapshotKind },
): Promise<{ db: Database; meta: Metadata; anchor: SequenceAnchor | undefined }> {
  const fresh = locationIsNew(where)
  const db = await openDatabase(where, { create: true })
  let staged = false
  let anchor: SequenceAnchor | undefined
  try {
    if ((await db.get(COUNTING_META_KEY)) !== undefined || (await readMetadata(where, db, { required: false })) !== undefined) {
      throw new BloomError('BLOOM_INVALID_PARAMETER', `location must be a new or empty folder; ${where} already holds a filter`)
    }
    anchor = newAnchor(where, { create: true })
    await db.put(IMPORTING_KEY, Uint8Array.of(1), { sync: true })
    staged = true
    const pages = new StagedPages(db, pageBytes, kind)
    const reader = snapshotReader(source, kind)
    for await (const chunk of snapshotChunks(source)) {
      const pieces = reader.push(chunk)
      if (reader.parameters !== undefined) pages.begin(reader.parameters)
      for (const piece of pieces) await pages.add(piece.shard, piece.offset, piece.bytes)
    }
    const { parameters } = reader.finish()
    pages.begin(parameters)
    const meta: Metadata = { parameters, pageBytes }
    const record: Put[] =
      kind === 'counting'
        ? [{ type: 'put', key: COUNTING_META_KEY, value: encodeMetadata(meta, COUNTING_METADATA) }]
        : [
            { type: 'put', key: META_KEY, value: encodeMetadata(meta) },
            { type: 'put', key: COUNTS_KEY, value: encodeCounts(pages.counts!) },
          ]
    // One batch makes the filter visible: its record appears as the marker goes. It holds the last
    // page versions, so that losing a page batch before it shows; the import is sequence number 1.
    await db.batch(
      [...(await pages.finish()), ...record, { type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint(1) }, { type: 'del', key: IMPORTING_KEY }],
      { sync: true },
    )
    return { db, meta, anchor }
  } catch (error) {
    anchor?.close()
    if (staged) await db.clear().catch(() => {})
    await closeDatabase(where, db).catch(() => {})
    if (fresh) removeLocation(where)
    throw storeError(where, 'cannot be imported into', error)
  }
}

/**
 * The pages of an import as the snapshot's payload arrives: each page is filled, then written
 * (version 1, the import being the filter's first write) unless all zero, in batches of a few MiB;
 * page versions are written a chunk at a time as the pages pass each chunk's end.
 */
class StagedPages {
  /** Set bits per shard (a plain filter's counts record); counted for plain snapshots only. */
  counts: Float64Array | undefined
  private geometry: PageGeometry | undefined
  private readonly page: Uint8Array
  private shard = -1
  private index = -1
  private filled = 0
  private length = 0
  private ops: Put[] = []
  private opBytes = 0
  /** The chunk of page versions being filled, and its number. */
  private versions: Uint32Array | undefined
  private chunk = -1

  constructor(
    private readonly db: Database,
    private readonly pageBytes: number,
    private readonly kind: SnapshotKind,
  ) {
    this.page = new Uint8Array(pageBytes)
  }

  /** Takes the filter's parameters once the header is read; before the first page it refuses a filter too large for this page size. */
  begin(parameters: FilterParameters): void {
    if (this.geometry !== undefined) return
    const shardBytes = this.kind === 'counting' ? counterShardBytesOf(parameters) : shardBytesOf(parameters)
    checkPageTable(parameters, this.pageBytes, { shardBytes })
    this.geometry = new PageGeometry(parameters, this.pageBytes, { shardBytes })
    if (this.kind === 'plain') this.counts = new Float64Array(parameters.shards)
  }

  /** Bytes `offset …` of a shard's payload. */
  async add(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    const { pageBytes, shardBytes } = this.geometry!
    let at = 0
    while (at < bytes.length) {
      const pageIndex = Math.floor((offset + at) / pageBytes)
      if (this.shard !== shard || this.index !== pageIndex) {
        await this.emit()
        this.shard = shard
        this.index = pageIndex
        this.filled = 0
        this.length = Math.min(pageBytes, shardBytes - pageIndex * pageBytes)
        this.page.fill(0)
      }
      const from = offset + at - pageIndex * pageBytes
      const n = Math.min(this.length - from, bytes.length - at)
      this.page.set(bytes.subarray(at, at + n), from)
      this.filled += n
      at += n
      if (this.filled === this.length) await this.emit()
    }
  }

  /** Writes what is left; returns the last page versions' puts, for the batch that makes the filter visible. */
  async finish(): Promise<Put[]> {
    await this.emit()
    if (this.ops.length > 0) await this.db.batch(this.ops)
    this.ops = []
    this.takeVersions()
    return this.ops
  }

  private async emit(): Promise<void> {
    if (this.shard < 0) return
    const geometry = this.geometry!
    const bytes = this.page.subarray(0, this.length)
    const set = this.counts === undefined ? (bytes.some((byte) => byte !== 0) ? 1 : 0) : popcount(bytes)
    if (this.counts !== undefined) this.counts[this.shard] += set
    if (set > 0) {
      const page = this.shard * geometry.pagesPerShard + this.index
      const chunk = Math.floor(page / CHUNK_PAGES)
      if (chunk !== this.chunk) {
        this.takeVersions()
        this.chunk = chunk
        this.versions = new Uint32Array(Math.min(CHUNK_PAGES, geometry.pages - chunk * CHUNK_PAGES))
      }
      this.versions![page - chunk * CHUNK_PAGES] = 1
      this.ops.push({ type: 'put', key: pageKey(this.shard, this.index), value: encodePage(bytes, 1) })
      this.opBytes += this.length
    }
    this.shard = -1
    if (this.opBytes >= IMPORT_BATCH_BYTES) {
      await this.db.batch(this.ops)
      this.ops = []
      this.opBytes = 0
    }
  }

  /** Queues the chunk of versions being filled (pages only go forward, so it is complete). */
  private takeVersions(): void {
    if (this.versions !== undefined) this.ops.push({ type: 'put', key: versionsKey(this.chunk), value: encodeVersions(this.versions) })
    this.versions = undefined
  }
}
