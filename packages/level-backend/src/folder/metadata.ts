import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkParameters, crc32, snapshotFormat } from '@bloomkit/core/store'
import type { Database } from './database.js'
import { corruptStore, notAFilter } from '../errors.js'
import { checkPageBytes } from '../options.js'
import { IMPORTING_KEY, META_KEY } from './records.js'
import { newAnchor } from './sequence-anchor.js'

const { readParameterFields, writeParameterFields } = snapshotFormat

/** The folder format version this release writes and reads. */
export const FORMAT_VERSION = 2

const META_MAGIC = 0x564c4b42 // "BKLV" read little-endian
const META_BYTES = 40

/** What the metadata record holds. */
export interface Metadata {
  readonly parameters: FilterParameters
  /** Bytes per page, a power of two from 1 KiB to 1 MiB. */
  readonly pageBytes: number
}

/** The 40-byte metadata record: magic, format version, hash scheme, parameters, page size, CRC-32. */
export function encodeMetadata(meta: Metadata): Uint8Array {
  const bytes = new Uint8Array(META_BYTES)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, META_MAGIC, true)
  view.setUint16(4, FORMAT_VERSION, true)
  writeParameterFields(view, meta.parameters)
  view.setUint32(24, meta.pageBytes, true)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}

/**
 * Reads a metadata record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` (not a bloomkit record, bad CRC, impossible fields) or
 *   `BLOOM_UNSUPPORTED_VERSION` (a later folder format or hash scheme).
 */
export function decodeMetadata(location: string, bytes: Uint8Array): Metadata {
  if (bytes.length !== META_BYTES) throw notAFilter(location, `the metadata record is ${bytes.length} bytes, expected ${META_BYTES}: not a bloomkit filter`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (view.getUint32(0, true) !== META_MAGIC) throw notAFilter(location, 'the metadata record does not start with "BKLV": not a bloomkit filter')
  if (view.getUint32(36, true) !== crc32(bytes.subarray(0, 36))) throw corruptStore(location, 'the metadata record fails its CRC-32 check')
  const version = view.getUint16(4, true)
  if (version !== FORMAT_VERSION) {
    const advice = version < FORMAT_VERSION ? ': export it with the release that wrote it and import the snapshot with this one' : ''
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${location}: folder format version ${version} is not supported; this release reads version ${FORMAT_VERSION}${advice}`)
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
