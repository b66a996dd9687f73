import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkParameters, crc32, snapshotFormat } from '@bloomkit/core/store'
import { corruptStore, notAFilter } from '../errors.js'
import { checkPageBytes } from '../options.js'

const { readParameterFields, writeParameterFields } = snapshotFormat

/** The record that makes a folder a counting filter's (and tells a plain open to refuse it). */
export const COUNTING_META_KEY = 'counting'

/**
 * The counting folder format this release writes and reads: 2, pages with versions and CRC-32s
 * under `p` keys, a log of the pages each batch wrote, the checkpoint record and the anchor, as a
 * plain folder has. Version 1 (unreleased builds) kept unversioned pages under `c` keys.
 */
export const COUNTING_FORMAT_VERSION = 2

const META_MAGIC = 0x434b4c42 // "BLKC" read little-endian
const META_BYTES = 40

/** What the counting record holds. */
export interface CountingMetadata {
  readonly parameters: FilterParameters
  /** Bytes of counters per page. */
  readonly pageBytes: number
}

/** The 40-byte counting record: magic, format version, hash scheme, parameters, page size, CRC-32 (the plain `meta` record's layout). */
export function encodeCountingMetadata({ parameters, pageBytes }: CountingMetadata): Uint8Array {
  const bytes = new Uint8Array(META_BYTES)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, META_MAGIC, true)
  view.setUint16(4, COUNTING_FORMAT_VERSION, true)
  writeParameterFields(view, parameters)
  view.setUint32(24, pageBytes, true)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}

/**
 * Reads a counting record.
 * @throws BloomError `BLOOM_CORRUPT_STORE` (not a counting record, bad CRC, impossible fields) or
 *   `BLOOM_UNSUPPORTED_VERSION` (version 1, written by an unreleased build, or a later version).
 */
export function decodeCountingMetadata(location: string, bytes: Uint8Array): CountingMetadata {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length !== META_BYTES || view.getUint32(0, true) !== META_MAGIC) throw notAFilter(location, 'the counting record is not a bloomkit counting filter’s')
  if (view.getUint32(36, true) !== crc32(bytes.subarray(0, 36))) throw corruptStore(location, 'the counting record fails its CRC-32 check')
  const version = view.getUint16(4, true)
  if (version !== COUNTING_FORMAT_VERSION) {
    const advice =
      version < COUNTING_FORMAT_VERSION
        ? ' (pages without versions or checksums, from a build before the first release with counting filters): export it with the build that wrote it and import the snapshot with this one'
        : ''
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${location}: counting folder format version ${version} is not supported; this release reads version ${COUNTING_FORMAT_VERSION}${advice}`)
  }
  try {
    const parameters = checkParameters(readParameterFields(view, location))
    return { parameters, pageBytes: checkPageBytes(view.getUint32(24, true)) }
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${location}: the counting record holds impossible fields: ${(error as Error).message}`, { cause: error })
  }
}
