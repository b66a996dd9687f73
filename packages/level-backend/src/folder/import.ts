import { BloomError } from '@bloomkit/core'
import { popcount, shardBytesOf, SnapshotReader, type SnapshotSource, snapshotSources } from '@bloomkit/core/store'
import { newAnchor, type SequenceAnchor } from './sequence-anchor.js'
import { closeDatabase, locationIsNew, openDatabase, removeLocation, type Database } from './database.js'
import { storeError } from '../errors.js'
import { encodeMetadata, readMetadata, type Metadata } from './metadata.js'
import { checkPageTable } from '../options.js'
import { PageGeometry } from '../pages/page-geometry.js'
import { PageVersions } from './page-versions.js'
import { CHECKPOINT_KEY, COUNTS_KEY, encodeCheckpoint, encodeCounts, encodePage, IMPORTING_KEY, META_KEY, pageKey } from './records.js'

const { snapshotChunks } = snapshotSources

export type { SnapshotSource }

/** Bytes of pages per LevelDB batch while importing. */
const IMPORT_BATCH_BYTES = 4 * 2 ** 20

/**
 * Streams a snapshot into a new folder page by page (all-zero pages are skipped), holding one page
 * and one write batch in memory. The pages are staged under an `importing` marker and the metadata
 * is written only after the snapshot's length and CRC-32 check out, so a bad snapshot never opens
 * as a filter; on failure the staged pages are deleted (and the folder, if this call created it).
 * Resolves with the database still open, for the store to adopt.
 *
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_INVALID_PARAMETER`
 *   (the folder already holds a filter), `BLOOM_CORRUPT_STORE` (it holds other data), `BLOOM_LOCKED`,
 *   `BLOOM_STORE_UNAVAILABLE`.
 */
export async function importSnapshot(
  where: string,
  source: SnapshotSource,
  pageBytes: number,
): Promise<{ db: Database; meta: Metadata; anchor: SequenceAnchor | undefined }> {
  const fresh = locationIsNew(where)
  const db = await openDatabase(where, { create: true })
  let staged = false
  let anchor: SequenceAnchor | undefined
  try {
    if ((await readMetadata(where, db, false)) !== undefined) {
      throw new BloomError('BLOOM_INVALID_PARAMETER', `location must be a new or empty folder; ${where} already holds a filter`)
    }
    anchor = newAnchor(where, true)
    await db.put(IMPORTING_KEY, Uint8Array.of(1), { sync: true })
    staged = true

    const reader = new SnapshotReader()
    let ops: { type: 'put'; key: string; value: Uint8Array }[] = []
    let opBytes = 0
    let page = new Uint8Array(pageBytes)
    let shard = -1
    let index = -1
    let filled = 0
    let length = 0
    let counts: Float64Array | undefined
    let geometry: PageGeometry | undefined
    let versions: PageVersions | undefined
    const emit = async () => {
      if (shard < 0) return
      const bytes = page.subarray(0, length)
      const set = popcount(bytes)
      counts ??= new Float64Array(reader.parameters!.shards)
      counts[shard] += set
      if (set > 0) {
        ops.push({ type: 'put', key: pageKey(shard, index), value: encodePage(bytes, versions!.next(shard * geometry!.pagesPerShard + index)) })
        opBytes += length
      }
      shard = -1
      if (opBytes >= IMPORT_BATCH_BYTES) {
        await db.batch(ops)
        ops = []
        opBytes = 0
      }
    }
    for await (const chunk of snapshotChunks(source)) {
      const pieces = reader.push(chunk)
      if (geometry === undefined && reader.parameters !== undefined) {
        // Before the first page: refuse a filter too large for this page size without writing anything.
        checkPageTable(reader.parameters, pageBytes)
        geometry = new PageGeometry(reader.parameters, pageBytes)
        versions = new PageVersions(geometry.pages)
      }
      for (const piece of pieces) {
        const shardBytes = shardBytesOf(reader.parameters!)
        let at = 0
        while (at < piece.bytes.length) {
          const offset = piece.offset + at
          const pageIndex = Math.floor(offset / pageBytes)
          if (shard !== piece.shard || index !== pageIndex) {
            await emit()
            shard = piece.shard
            index = pageIndex
            filled = 0
            length = Math.min(pageBytes, shardBytes - pageIndex * pageBytes)
            page.fill(0)
          }
          const from = offset - pageIndex * pageBytes
          const n = Math.min(length - from, piece.bytes.length - at)
          page.set(piece.bytes.subarray(at, at + n), from)
          filled += n
          at += n
          if (filled === length) await emit()
        }
      }
    }
    const { parameters } = reader.finish()
    await emit()
    if (ops.length > 0) await db.batch(ops)
    page = new Uint8Array(0)
    const meta: Metadata = { parameters, pageBytes }
    // One batch makes the filter visible: the metadata appears as the marker goes. It holds the
    // page versions, so that losing a page batch before it shows; the import is sequence number 1.
    await db.batch(
      [
        ...(versions?.takeChanges() ?? []),
        { type: 'put', key: META_KEY, value: encodeMetadata(meta) },
        { type: 'put', key: COUNTS_KEY, value: encodeCounts(counts ?? new Float64Array(parameters.shards)) },
        { type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint(1) },
        { type: 'del', key: IMPORTING_KEY },
      ],
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
