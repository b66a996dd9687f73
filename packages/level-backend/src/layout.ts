import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkParameters, crc32, readParameterFields, writeParameterFields } from '@bloomkit/core/store'

/**
 * How a filter sits in a LevelDB database (or IndexedDB store). Keys are short strings:
 * - `meta`: the parameters and page size (see {@link encodeMetadata}), written once at create.
 * - `p<shard:4 hex><page:8 hex>`: one page of a shard's bits plus a CRC-32; absent pages are all zero.
 * - `l<seq:12 hex>`: one log record, the keys an `add`/`addMany` batch made new, until a checkpoint
 *   folds them into pages.
 * - `counts`: set bits per shard as of the last checkpoint, trusted only when no log is left to
 *   replay (so a clean reopen answers `estimateCount` without reading every page).
 * - `importing`: set while an import streams pages in, so a half-imported folder never opens.
 * Hex of fixed width keeps LevelDB's byte order equal to numeric order.
 */

/** Key of the metadata record. */
export const META_KEY = 'meta'
/** Key of the per-shard set-bit counts. */
export const COUNTS_KEY = 'counts'
/** Key of the marker an unfinished import leaves. */
export const IMPORTING_KEY = 'importing'
/** Range of page keys, for iterators (`gte`/`lt`). */
export const PAGE_RANGE = { gte: 'p', lt: 'q' } as const
/** Range of log keys, for iterators. */
export const LOG_RANGE = { gte: 'l', lt: 'm' } as const
/** Bytes of a page by default: measured in benchmarks/src/level.ts (see the README). */
export const DEFAULT_PAGE_BYTES = 16 * 1024
/** Smallest and largest page sizes (powers of two). */
export const MIN_PAGE_BYTES = 1024
export const MAX_PAGE_BYTES = 1024 * 1024
/** The layout version this release writes and reads. */
export const LAYOUT_VERSION = 1

const META_MAGIC = 0x564c4b42 // "BKLV" read little-endian
const META_BYTES = 40
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

/** What the metadata record holds. */
export interface Metadata {
  readonly parameters: FilterParameters
  /** Bytes per page, a power of two from 1 KiB to 1 MiB. */
  readonly pageBytes: number
}

function corruptStore(location: string, what: string): BloomError {
  return new BloomError('BLOOM_CORRUPT_STORE', `${location}: ${what}`)
}

/** The 40-byte metadata record: magic, layout version, hash scheme, parameters, page size, CRC-32. */
export function encodeMetadata(meta: Metadata): Uint8Array {
  const bytes = new Uint8Array(META_BYTES)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, META_MAGIC, true)
  view.setUint16(4, LAYOUT_VERSION, true)
  writeParameterFields(view, meta.parameters)
  view.setUint32(24, meta.pageBytes, true)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}

/**
 * Reads a metadata record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` (not a bloomkit record, bad CRC, impossible fields) or
 *   `BLOOM_UNSUPPORTED_VERSION` (a later layout or hash scheme).
 */
export function decodeMetadata(location: string, bytes: Uint8Array): Metadata {
  if (bytes.length !== META_BYTES) throw corruptStore(location, `the metadata record is ${bytes.length} bytes, expected ${META_BYTES}: not a bloomkit filter`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(0, true) !== META_MAGIC) throw corruptStore(location, 'the metadata record does not start with "BKLV": not a bloomkit filter')
  if (view.getUint32(36, true) !== crc32(bytes.subarray(0, 36))) throw corruptStore(location, 'the metadata record fails its CRC-32 check')
  const version = view.getUint16(4, true)
  if (version !== LAYOUT_VERSION) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${location}: layout version ${version} is not supported; this release reads version ${LAYOUT_VERSION}`)
  }
  const fields = readParameterFields(view, location)
  const pageBytes = view.getUint32(24, true)
  try {
    const parameters = checkParameters(fields)
    checkPageBytes(pageBytes)
    return { parameters, pageBytes }
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${location}: the metadata record holds impossible fields: ${(error as Error).message}`, { cause: error })
  }
}

/**
 * Asserts a page size: a power of two from 1 KiB to 1 MiB.
 * @throws BloomError `BLOOM_INVALID_PARAMETER`.
 */
export function checkPageBytes(pageBytes: unknown): number {
  if (typeof pageBytes !== 'number' || !Number.isInteger(pageBytes) || pageBytes < MIN_PAGE_BYTES || pageBytes > MAX_PAGE_BYTES || (pageBytes & (pageBytes - 1)) !== 0) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `pageBytes must be a power of two from ${MIN_PAGE_BYTES} to ${MAX_PAGE_BYTES}; got ${String(pageBytes)}`)
  }
  return pageBytes
}

/** A page as stored: its bytes followed by their CRC-32 (little-endian). */
export function encodePage(bytes: Uint8Array): Uint8Array {
  const value = new Uint8Array(bytes.length + 4)
  value.set(bytes)
  new DataView(value.buffer).setUint32(bytes.length, crc32(bytes), true)
  return value
}

/**
 * A stored page's bytes (a view into `value`), after checking its length and CRC-32.
 * @throws BloomError `BLOOM_CORRUPT_STORE` naming the page.
 */
export function decodePage(location: string, shard: number, page: number, length: number, value: Uint8Array): Uint8Array {
  if (value.length !== length + 4) {
    throw corruptStore(location, `page ${page} of shard ${shard} is ${value.length} bytes, expected ${length + 4}`)
  }
  const bytes = value.subarray(0, length)
  const stored = new DataView(value.buffer, value.byteOffset + length, 4).getUint32(0, true)
  if (stored !== crc32(bytes)) throw corruptStore(location, `page ${page} of shard ${shard} fails its CRC-32 check`)
  return bytes
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

/** Set bits per shard as float64 little-endian, then a CRC-32. */
export function encodeCounts(counts: Float64Array): Uint8Array {
  const value = new Uint8Array(counts.length * 8 + 4)
  const view = new DataView(value.buffer)
  for (let i = 0; i < counts.length; i++) view.setFloat64(i * 8, counts[i], true)
  view.setUint32(counts.length * 8, crc32(value.subarray(0, counts.length * 8)), true)
  return value
}

/**
 * Reads a counts record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a wrong length or CRC-32.
 */
export function decodeCounts(location: string, shards: number, value: Uint8Array): Float64Array {
  if (value.length !== shards * 8 + 4) throw corruptStore(location, `the counts record is ${value.length} bytes, expected ${shards * 8 + 4}`)
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength)
  if (view.getUint32(shards * 8, true) !== crc32(value.subarray(0, shards * 8))) throw corruptStore(location, 'the counts record fails its CRC-32 check')
  const counts = new Float64Array(shards)
  for (let i = 0; i < shards; i++) counts[i] = view.getFloat64(i * 8, true)
  return counts
}
