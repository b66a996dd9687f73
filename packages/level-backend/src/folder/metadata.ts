import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkParameters, crc32, snapshotFormat } from '@bloomkit/core/store'
import type { Database } from './database.js'
import { corruptStore, notAFilter } from '../errors.js'
import { checkPageBytes } from '../options.js'
import { IMPORTING_KEY, META_KEY } from './records.js'
import { newAnchor } from './sequence-anchor.js'

const { readParameterFields, writeParameterFields } = snapshotFormat

/** What a metadata record holds. */
export interface Metadata {
  readonly parameters: FilterParameters
  /** Bytes per page (of bits, or of a counting filter's counters), a power of two from 1 KiB to 1 MiB. */
  readonly pageBytes: number
}

/**
 * One of the two 40-byte metadata records, alike but for magic, version and names: a plain
 * folder's `meta` and a counting folder's `counting` (which also tells a plain open to refuse it).
 */
export interface MetadataRecord {
  readonly magic: number
  /** The format version this release writes and reads. */
  readonly version: number
  /** How errors name the record and its format. */
  readonly record: string
  readonly format: string
  /** After "not supported" for an earlier version: what it was and what to do. */
  readonly earlier: string
  /** The BLOOM_CORRUPT_STORE text for bytes of another length or magic: not this kind of record. */
  readonly notOurs: (bytes: Uint8Array) => string
}

/** The plain folder's `meta` record: magic "BKLV" (read little-endian), folder format 2. */
export const PLAIN_METADATA: MetadataRecord = {
  magic: 0x564c4b42,
  version: 2,
  record: 'metadata record',
  format: 'folder format',
  earlier: ': export it with the release that wrote it and import the snapshot with this one',
  notOurs: (bytes) =>
    bytes.length !== META_BYTES ? `the metadata record is ${bytes.length} bytes, expected ${META_BYTES}: not a bloomkit filter` : 'the metadata record does not start with "BKLV": not a bloomkit filter',
}

/**
 * The counting folder's `counting` record: magic "BLKC", counting folder format 2 (pages with
 * versions and CRC-32s under `p` keys, a log of the pages each batch wrote, the checkpoint record
 * and the anchor, as a plain folder has). Version 1 (unreleased builds) kept unversioned pages under `c` keys.
 */
export const COUNTING_METADATA: MetadataRecord = {
  magic: 0x434b4c42,
  version: 2,
  record: 'counting record',
  format: 'counting folder format',
  earlier:
    ' (pages without versions or checksums, from a build before the first release with counting filters): export it with the build that wrote it and import the snapshot with this one',
  notOurs: () => 'the counting record is not a bloomkit counting filter’s',
}

const META_BYTES = 40

/** The 40-byte record: magic, format version, hash scheme, parameters, page size, CRC-32. */
export function encodeMetadata(meta: Metadata, kind: MetadataRecord = PLAIN_METADATA): Uint8Array {
  const bytes = new Uint8Array(META_BYTES)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, kind.magic, true)
  view.setUint16(4, kind.version, true)
  writeParameterFields(view, meta.parameters)
  view.setUint32(24, meta.pageBytes, true)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}

/**
 * Reads a metadata record of `kind`.
 * @throws BloomError `BLOOM_CORRUPT_STORE` (not a record of this kind, bad CRC, impossible fields) or
 *   `BLOOM_UNSUPPORTED_VERSION` (an earlier or a later format, or hash scheme).
 */
export function decodeMetadata(location: string, bytes: Uint8Array, kind: MetadataRecord = PLAIN_METADATA): Metadata {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length !== META_BYTES || view.getUint32(0, true) !== kind.magic) throw notAFilter(location, kind.notOurs(bytes))
  if (view.getUint32(36, true) !== crc32(bytes.subarray(0, 36))) throw corruptStore(location, `the ${kind.record} fails its CRC-32 check`)
  const version = view.getUint16(4, true)
  if (version !== kind.version) {
    const advice = version < kind.version ? kind.earlier : ''
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${location}: ${kind.format} version ${version} is not supported; this release reads version ${kind.version}${advice}`)
  }
  // A later hash scheme is BLOOM_UNSUPPORTED_VERSION (readParameterFields), not damage.
  const fields = readParameterFields(view, location)
  try {
    return { parameters: checkParameters(fields), pageBytes: checkPageBytes(view.getUint32(24, true)) }
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${location}: the ${kind.record} holds impossible fields: ${(error as Error).message}`, { cause: error })
  }
}

/**
 * The metadata record, or undefined for an empty database.
 * @throws BloomError `BLOOM_CORRUPT_STORE` when the database holds other data or an unfinished
 *   import, `BLOOM_NOT_FOUND` when it is empty and `required`.
 */
export async function readMetadata(location: string, db: Database, { required }: { readonly required: boolean }): Promise<Metadata | undefined> {
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

/**
 * The metadata record an open of a plain filter needs.
 * @throws BloomError as {@link readMetadata}, and `BLOOM_DATA_LOST` when the database is empty but
 *   the folder's anchor says it held records (LevelDB lost them all), `BLOOM_NOT_FOUND` when it is
 *   empty and was never written.
 */
export async function requireMetadata(location: string, db: Database): Promise<Metadata> {
  const meta = await readMetadata(location, db, { required: false })
  if (meta !== undefined) return meta
  newAnchor(location, { create: false })
  return (await readMetadata(location, db, { required: true }))!
}
