import { crc32 } from '@bloomkit/core/store'
import type { Database } from './database.js'
import { corruptStore } from '../errors.js'

/**
 * The records of a filter's folder (a LevelDB database, or an IndexedDB store), apart from the
 * metadata (metadata.ts). Keys are short strings:
 * - `meta`: the parameters and page size, written once at create (a counting filter's folder has
 *   a `counting` record instead, of the same layout: metadata.ts).
 * - `p<shard:4 hex><page:8 hex>`: one page of a shard's bits, its version and a CRC-32; a page
 *   never written is absent and all zero.
 * - `v<chunk:6 hex>`: the versions of 4096 pages as of the last checkpoint (page-versions.ts): a
 *   page older than its recorded version, or missing while its version is not 0, was lost.
 * - `l<seq:12 hex>`: one log record, the keys an `add`/`addMany` batch made new, until a checkpoint
 *   folds them into pages. A counting filter writes its pages with every batch instead, and its log
 *   record says which pages that batch wrote at which versions (the page versions of batches since
 *   the last checkpoint, and a number that shows a lost batch).
 * - `checkpoint`: the sequence number the log starts at (records before it were folded into
 *   pages); the log must run from there without a gap.
 * - `counts`: set bits per shard as of the last checkpoint, trusted only when no log is left to
 *   replay (so a clean reopen answers `estimateCount` without reading every page).
 * - `importing`: set while an import streams pages in, so a half-imported folder never opens.
 * Hex of fixed width keeps LevelDB's byte order equal to numeric order.
 */

/** Key of the metadata record. */
export const META_KEY = 'meta'
/** Key of a counting filter's metadata record (in place of `meta`; it also tells a plain open to refuse the folder). */
export const COUNTING_META_KEY = 'counting'
/** Key of the per-shard set-bit counts. */
export const COUNTS_KEY = 'counts'
/** Key of the checkpoint record (where the log starts). */
export const CHECKPOINT_KEY = 'checkpoint'
/** Key of the marker an unfinished import leaves. */
export const IMPORTING_KEY = 'importing'
/** Range of page keys, for iterators (`gte`/`lt`). */
export const PAGE_RANGE = { gte: 'p', lt: 'q' } as const
/** Range of log keys, for iterators. */
export const LOG_RANGE = { gte: 'l', lt: 'm' } as const
/** Range of page-version chunk keys, for iterators. */
export const VERSIONS_RANGE = { gte: 'v', lt: 'w' } as const

/** Deletions of every page, log and page-versions record: what emptying a filter's bits removes. */
export async function bitRecordDeletions(db: Database): Promise<{ type: 'del'; key: string }[]> {
  const ops: { type: 'del'; key: string }[] = []
  for await (const key of db.keys(PAGE_RANGE)) ops.push({ type: 'del', key })
  for await (const key of db.keys(LOG_RANGE)) ops.push({ type: 'del', key })
  for await (const key of db.keys(VERSIONS_RANGE)) ops.push({ type: 'del', key })
  return ops
}

const LOG_MAGIC = 0x474c4b42 // "BKLG"

/** Key of page `page` (counted from 0 within the shard) of shard `shard`. */
export function pageKey(shard: number, page: number): string {
  return `p${shard.toString(16).padStart(4, '0')}${page.toString(16).padStart(8, '0')}`
}

/** Shard and page of a page key. */
export function parsePageKey(key: string): { shard: number; page: number } {
  return { shard: parseInt(key.slice(1, 5), 16), page: parseInt(key.slice(5, 13), 16) }
}

/** Key of log record `seq`. */
export function logKey(seq: number): string {
  return `l${seq.toString(16).padStart(12, '0')}`
}

/** Sequence number of a log key. */
export function parseLogKey(key: string): number {
  return parseInt(key.slice(1), 16)
}

/** Key of page-version chunk `chunk`. */
export function versionsKey(chunk: number): string {
  return `v${chunk.toString(16).padStart(6, '0')}`
}

/** Chunk number of a page-version key. */
export function parseVersionsKey(key: string): number {
  return parseInt(key.slice(1), 16)
}

/** A page as stored: its bytes, its version (u32) and a CRC-32 of both (little-endian). */
export function encodePage(bytes: Uint8Array, version: number): Uint8Array {
  const length = bytes.length
  const value = new Uint8Array(length + 8)
  value.set(bytes)
  const view = new DataView(value.buffer)
  view.setUint32(length, version, true)
  view.setUint32(length + 4, crc32(value.subarray(0, length + 4)), true)
  return value
}

/** A stored page: its bits (a view into the stored value) and its version. */
export interface StoredPage {
  readonly bytes: Uint8Array
  readonly version: number
}

/**
 * A stored page's bytes and version, after checking its length and CRC-32.
 * @throws BloomError `BLOOM_CORRUPT_STORE` naming the page.
 */
export function decodePage(location: string, shard: number, page: number, length: number, value: Uint8Array): StoredPage {
  if (value.length !== length + 8) {
    throw corruptStore(location, `page ${page} of shard ${shard} is ${value.length} bytes, expected ${length + 8}`)
  }
  const view = new DataView(value.buffer, value.byteOffset + length, 8)
  if (view.getUint32(4, true) !== crc32(value.subarray(0, length + 4))) throw corruptStore(location, `page ${page} of shard ${shard} fails its CRC-32 check`)
  return { bytes: value.subarray(0, length), version: view.getUint32(0, true) }
}

/** Keys made new by one `setBits` call: `count` keys, each a shard and `hashes` positions. */
export interface LogRecord {
  readonly count: number
  readonly hashes: number
  readonly shards: Uint32Array
  readonly positions: Uint32Array
}

/**
 * A log record: magic, count, hashes, the shards, the positions (all little-endian u32), CRC-32.
 * 4 + 4·hashes bytes per key: about 32 bytes for k = 7, far less than the pages a batch touches.
 */
export function encodeLogRecord(count: number, hashes: number, shards: Uint32Array, positions: Uint32Array): Uint8Array {
  const words = 3 + count + count * hashes
  const value = new Uint8Array(words * 4 + 4)
  if (LITTLE_ENDIAN) {
    const u32 = new Uint32Array(value.buffer, 0, words + 1)
    u32[0] = LOG_MAGIC
    u32[1] = count
    u32[2] = hashes
    u32.set(shards.subarray(0, count), 3)
    u32.set(positions.subarray(0, count * hashes), 3 + count)
    u32[words] = crc32(value.subarray(0, words * 4))
    return value
  }
  const view = new DataView(value.buffer)
  view.setUint32(0, LOG_MAGIC, true)
  view.setUint32(4, count, true)
  view.setUint32(8, hashes, true)
  let at = 12
  for (let i = 0; i < count; i++, at += 4) view.setUint32(at, shards[i], true)
  for (let i = 0; i < count * hashes; i++, at += 4) view.setUint32(at, positions[i], true)
  view.setUint32(at, crc32(value.subarray(0, at)), true)
  return value
}

/** Whether typed arrays are little-endian here (everywhere JS runs in practice); else DataView is used. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1

/**
 * Reads a log record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a wrong length or CRC-32.
 */
export function decodeLogRecord(location: string, seq: number, value: Uint8Array): LogRecord {
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength)
  const bad = (why: string) => corruptStore(location, `log record ${seq} ${why}`)
  if (value.length < 16 || view.getUint32(0, true) !== LOG_MAGIC) throw bad('is not a bloomkit log record')
  const count = view.getUint32(4, true)
  const hashes = view.getUint32(8, true)
  const end = 12 + 4 * (count + count * hashes)
  if (value.length !== end + 4) throw bad(`is ${value.length} bytes, expected ${end + 4}`)
  if (view.getUint32(end, true) !== crc32(value.subarray(0, end))) throw bad('fails its CRC-32 check')
  const shards = new Uint32Array(count)
  const positions = new Uint32Array(count * hashes)
  let at = 12
  for (let i = 0; i < count; i++, at += 4) shards[i] = view.getUint32(at, true)
  for (let i = 0; i < positions.length; i++, at += 4) positions[i] = view.getUint32(at, true)
  return { count, hashes, shards, positions }
}

const PAGE_LOG_MAGIC = 0x57504b42 // "BKPW"

/** The pages one counting batch wrote, with the version each was written at. */
export interface PageLogRecord {
  readonly pages: Uint32Array
  readonly versions: Uint32Array
}

/** A counting store's log record: magic, count, then each page's number and version (u32 little-endian), CRC-32. */
export function encodePageLogRecord(pages: readonly number[], versions: readonly number[]): Uint8Array {
  return withCrc(8 + 8 * pages.length, (view) => {
    view.setUint32(0, PAGE_LOG_MAGIC, true)
    view.setUint32(4, pages.length, true)
    for (let i = 0; i < pages.length; i++) {
      view.setUint32(8 + 8 * i, pages[i], true)
      view.setUint32(12 + 8 * i, versions[i], true)
    }
  })
}

/**
 * Reads a counting store's log record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a wrong magic, length or CRC-32.
 */
export function decodePageLogRecord(location: string, seq: number, value: Uint8Array): PageLogRecord {
  const head = value.length >= 8 ? new DataView(value.buffer, value.byteOffset, 8) : undefined
  if (head === undefined || head.getUint32(0, true) !== PAGE_LOG_MAGIC) throw corruptStore(location, `log record ${seq} is not a bloomkit counting log record`)
  const count = head.getUint32(4, true)
  const view = checkedView(location, `log record ${seq}`, 8 + 8 * count, value)
  const pages = new Uint32Array(count)
  const versions = new Uint32Array(count)
  for (let i = 0; i < count; i++) {
    pages[i] = view.getUint32(8 + 8 * i, true)
    versions[i] = view.getUint32(12 + 8 * i, true)
  }
  return { pages, versions }
}

/** A record of `bytes` bytes that `fill` writes, followed by their CRC-32 (little-endian). */
function withCrc(bytes: number, fill: (view: DataView) => void): Uint8Array {
  const value = new Uint8Array(bytes + 4)
  const view = new DataView(value.buffer)
  fill(view)
  view.setUint32(bytes, crc32(value.subarray(0, bytes)), true)
  return value
}

/**
 * A view of a {@link withCrc} record's `bytes` bytes, after checking its length and CRC-32.
 * @throws BloomError `BLOOM_CORRUPT_STORE` naming the record.
 */
function checkedView(location: string, what: string, bytes: number, value: Uint8Array): DataView {
  if (value.length !== bytes + 4) throw corruptStore(location, `${what} is ${value.length} bytes, expected ${bytes + 4}`)
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength)
  if (view.getUint32(bytes, true) !== crc32(value.subarray(0, bytes))) throw corruptStore(location, `${what} fails its CRC-32 check`)
  return view
}

/** The checkpoint record: the log's first sequence number (float64), then a CRC-32. */
export function encodeCheckpoint(logStart: number): Uint8Array {
  return withCrc(8, (view) => view.setFloat64(0, logStart, true))
}

/**
 * Reads the checkpoint record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a wrong length, CRC-32 or value.
 */
export function decodeCheckpoint(location: string, value: Uint8Array): number {
  const logStart = checkedView(location, 'the checkpoint record', 8, value).getFloat64(0, true)
  if (!Number.isSafeInteger(logStart) || logStart < 0) throw corruptStore(location, `the checkpoint record holds an impossible sequence number ${logStart}`)
  return logStart
}

/** Page versions as stored: u32 each, then a CRC-32. */
export function encodeVersions(versions: Uint32Array): Uint8Array {
  return withCrc(versions.length * 4, (view) => {
    for (let i = 0; i < versions.length; i++) view.setUint32(i * 4, versions[i], true)
  })
}

/**
 * Reads `count` page versions of chunk `chunk` into `into` from index `at`.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a wrong length or CRC-32.
 */
export function decodeVersions(location: string, chunk: number, count: number, value: Uint8Array, into: Uint32Array, at: number): void {
  const view = checkedView(location, `page-version record ${chunk}`, count * 4, value)
  for (let i = 0; i < count; i++) into[at + i] = view.getUint32(i * 4, true)
}

/** Set bits per shard as float64, then a CRC-32. */
export function encodeCounts(counts: Float64Array): Uint8Array {
  return withCrc(counts.length * 8, (view) => {
    for (let i = 0; i < counts.length; i++) view.setFloat64(i * 8, counts[i], true)
  })
}

/**
 * Reads a counts record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a wrong length or CRC-32.
 */
export function decodeCounts(location: string, shards: number, value: Uint8Array): Float64Array {
  const view = checkedView(location, 'the counts record', shards * 8, value)
  const counts = new Float64Array(shards)
  for (let i = 0; i < shards; i++) counts[i] = view.getFloat64(i * 8, true)
  return counts
}
