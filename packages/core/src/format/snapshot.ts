import { BloomError } from '../errors.js'
import { crc32 } from './crc32.js'
import { COUNTING_SNAPSHOT_VERSION, SNAPSHOT_MAGIC as MAGIC, SNAPSHOT_VERSION } from './versions.js'
import { checkParameters, schemeOf, shardBytesOf, type FilterParameters, type FilterParametersInput } from '../parameters.js'

/** Bytes of the snapshot header (docs/SPEC.md, "Snapshot format"). */
export const SNAPSHOT_HEADER_BYTES = 40
/** Bytes of the trailer: the payload's CRC-32. */
export const SNAPSHOT_TRAILER_BYTES = 4

/** A snapshot's header fields. */
export interface SnapshotHeader {
  readonly parameters: FilterParameters
  /** The writer's estimate of the distinct keys in the filter; a hint only. */
  readonly items: number
  /** Bits per counter: 0 for a plain filter (version 1), 4 for a counting one (version 3). */
  readonly counterBits?: number
}

/** Total bytes of a snapshot of a filter with these parameters (`counterBits` bits per position, 4 for a counting filter). */
export function snapshotBytes(parameters: FilterParameters, counterBits = 0): number {
  return SNAPSHOT_HEADER_BYTES + payloadBytesOf(parameters, counterBits) + SNAPSHOT_TRAILER_BYTES
}

/** Bytes of a snapshot's payload: one bit per position, or `counterBits` for a counting filter. */
function payloadBytesOf(parameters: FilterParameters, counterBits = 0): number {
  return (parameters.bits / 8) * Math.max(1, counterBits)
}

/** Writes an integer below 2^53 as a little-endian 64-bit field (the snapshot headers' bits, items, capacity, window). */
export function setUint64(view: DataView, offset: number, value: number): void {
  view.setUint32(offset, value % 4294967296, true)
  view.setUint32(offset + 4, Math.floor(value / 4294967296), true)
}

/** Reads a little-endian 64-bit field written by {@link setUint64}. */
export function getUint64(view: DataView, offset: number): number {
  return view.getUint32(offset, true) + view.getUint32(offset + 4, true) * 4294967296
}

/**
 * Writes the hash scheme and parameters at bytes 6–23 of `view` (scheme, hashes, seed, shards,
 * bits as in docs/SPEC.md's header). Backends that keep a header of their own (the LevelDB
 * metadata record) use the same fields at the same offsets.
 */
export function writeParameterFields(view: DataView, parameters: FilterParameters): void {
  view.setUint8(6, parameters.scheme)
  view.setUint8(7, parameters.hashes)
  view.setUint32(8, parameters.seed, true)
  view.setUint32(12, parameters.shards, true)
  setUint64(view, 16, parameters.bits)
}

/**
 * Reads what {@link writeParameterFields} wrote, unchecked: callers run `checkParameters`.
 * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` for a hash scheme this release does not know,
 *   naming `what` (the snapshot, the store).
 */
export function readParameterFields(view: DataView, what: string): FilterParametersInput {
  const scheme = schemeOf(view.getUint8(6), what)
  return { hashes: view.getUint8(7), seed: view.getUint32(8, true), shards: view.getUint32(12, true), bits: getUint64(view, 16), scheme }
}

/** The 40-byte version-1 header for a filter with these parameters (a counting filter's: `encodeCountingHeader`). */
export function encodeSnapshotHeader(header: SnapshotHeader): Uint8Array {
  const bytes = new Uint8Array(SNAPSHOT_HEADER_BYTES)
  const view = new DataView(bytes.buffer)
  const { parameters } = header
  view.setUint32(0, MAGIC, true)
  view.setUint16(4, SNAPSHOT_VERSION, true)
  writeParameterFields(view, parameters)
  setUint64(view, 24, Math.min(Math.max(0, Math.round(header.items)), Number.MAX_SAFE_INTEGER))
  view.setUint32(32, 0, true)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}

function corrupt(message: string): BloomError {
  return new BloomError('BLOOM_CORRUPT_SNAPSHOT', `snapshot ${message}`)
}

/** Which snapshots a reader takes: a plain filter's (version 1) or a counting filter's (version 3). */
export type SnapshotKind = 'plain' | 'counting'

/**
 * Reads and checks a header from the first 40 bytes of `bytes`: a plain filter's (version 1), or
 * with `kind` `'counting'` a counting filter's (version 3).
 *
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` (too short, not a snapshot, bad checksum, impossible
 *   fields) or `BLOOM_UNSUPPORTED_VERSION` (a later format version, an unknown hash scheme, or the
 *   other kind of filter, naming the import that takes it).
 */
export function decodeSnapshotHeader(bytes: Uint8Array, kind: SnapshotKind = 'plain'): SnapshotHeader {
  if (!(bytes instanceof Uint8Array)) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `snapshot must be a Uint8Array; got ${Object.prototype.toString.call(bytes)}`)
  }
  if (bytes.length < SNAPSHOT_HEADER_BYTES) {
    throw corrupt(`is truncated: ${bytes.length} bytes, the header alone is ${SNAPSHOT_HEADER_BYTES}`)
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, SNAPSHOT_HEADER_BYTES)
  if (view.getUint32(0, true) !== MAGIC) throw corrupt('does not start with "BLMK": not a bloomkit snapshot')
  if (view.getUint32(36, true) !== crc32(bytes.subarray(0, 36))) throw corrupt('header fails its CRC-32 check')
  const version = view.getUint16(4, true)
  if (version === 2) {
    // A layered snapshot (docs/SPEC.md, section 8): a fixed filter's import cannot hold it, and says where it goes.
    throw new BloomError(
      'BLOOM_UNSUPPORTED_VERSION',
      "snapshot format version 2 is a layered filter (docs/SPEC.md, section 8): import it with LayeredMemoryFilter.import from '@bloomkit/memory-backend/layered', LayeredLevelFilter.import or LayeredRedisFilter.import",
    )
  }
  // Version 3 is a counting filter (docs/SPEC.md, section 10); each kind's import refuses the other's.
  const counting = version === COUNTING_SNAPSHOT_VERSION
  if (version !== SNAPSHOT_VERSION && !counting) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `snapshot format version ${version} is not supported; this release reads versions 1, 2 and 3`)
  }
  if (counting !== (kind === 'counting')) {
    throw new BloomError(
      'BLOOM_UNSUPPORTED_VERSION',
      `snapshot is of a ${counting ? 'counting' : 'plain'} filter (format version ${version}, docs/SPEC.md): import it as one` +
        (counting ? ', or use exportPlain() of a counting filter' : ''),
    )
  }
  const fields = readParameterFields(view, 'the snapshot')
  // Version 3 keeps the counter width in byte 32; this release reads 4 only.
  const counterBits = counting ? view.getUint8(32) : 0
  if (counting && counterBits !== 4) throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `snapshot has ${counterBits}-bit counters; this release reads 4`)
  if (view.getUint32(32, true) >>> (counting ? 8 : 0) !== 0) throw corrupt('has unknown flags set')
  let parameters: FilterParameters
  try {
    parameters = checkParameters(fields)
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_SNAPSHOT', `snapshot header holds impossible parameters: ${(error as Error).message}`, { cause: error })
  }
  return counterBits === 0 ? { parameters, items: getUint64(view, 24) } : { parameters, items: getUint64(view, 24), counterBits }
}

/** A run of payload bytes: bytes `offset …` of shard `shard`. */
export interface PayloadChunk {
  readonly shard: number
  readonly offset: number
  readonly bytes: Uint8Array
}

/**
 * Checks that a snapshot of `length` bytes (when known) is as long as its header describes;
 * returns the length the header describes.
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` naming both lengths.
 */
function checkLength(header: SnapshotHeader, length: number | undefined): number {
  const expected = snapshotBytes(header.parameters, header.counterBits)
  if (length !== undefined && length !== expected) {
    throw corrupt(`is ${length} bytes; its header describes ${expected} (${length < expected ? 'truncated' : 'trailing bytes'})`)
  }
  return expected
}

/**
 * Checks a whole snapshot held in memory and returns its header and payload (a view, not a copy).
 *
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` for a wrong length or checksum; see {@link decodeSnapshotHeader}.
 */
export function decodeSnapshot(bytes: Uint8Array, kind: SnapshotKind = 'plain'): SnapshotHeader & { readonly payload: Uint8Array } {
  const header = decodeSnapshotHeader(bytes, kind)
  const expected = checkLength(header, bytes.length)
  const payload = bytes.subarray(SNAPSHOT_HEADER_BYTES, expected - SNAPSHOT_TRAILER_BYTES)
  const stored = new DataView(bytes.buffer, bytes.byteOffset + expected - SNAPSHOT_TRAILER_BYTES, 4).getUint32(0, true)
  if (stored !== crc32(payload)) throw corrupt('payload fails its CRC-32 check')
  return { ...header, payload }
}

/**
 * Reads a snapshot that arrives in pieces (a stream, a file read in chunks), so that a filter of
 * any size moves with bounded memory. Feed it with {@link push}; it hands back payload chunks by
 * shard as they complete the header, and {@link finish} checks length and checksum.
 *
 * A store that writes chunks as they come must not let the filter be used before `finish` returns
 * (write to a staging area, or discard on error): a corrupt snapshot must never yield a filter.
 */
export class SnapshotReader {
  private header: SnapshotHeader | undefined
  private headerBytes = new Uint8Array(SNAPSHOT_HEADER_BYTES)
  private trailer = new Uint8Array(SNAPSHOT_TRAILER_BYTES)
  private received = 0
  private crc = 0
  private payloadBytes = 0
  private shardBytes = 0
  private readonly kind: SnapshotKind
  private readonly length: number | undefined

  /**
   * @param kind `'counting'` to read a counting filter's snapshot (version 3) instead of a plain one.
   * @param options.length The snapshot's length in bytes, when known (a whole snapshot in memory):
   *   a header that describes another length is refused as soon as it is read, before any payload
   *   is handed out, so that nothing is sized after a header the bytes do not bear out.
   */
  constructor(kind: SnapshotKind = 'plain', { length }: { readonly length?: number } = {}) {
    this.kind = kind
    this.length = length
  }

  /** The header, once 40 bytes have arrived. */
  get parameters(): FilterParameters | undefined {
    return this.header?.parameters
  }

  /** The decoded header; throws if fewer than 40 bytes arrived. */
  getHeader(): SnapshotHeader {
    if (this.header === undefined) throw corrupt(`is truncated: ${this.received} bytes, the header alone is ${SNAPSHOT_HEADER_BYTES}`)
    return this.header
  }

  /** Takes the next bytes of the snapshot; returns the payload chunks they complete, in order. */
  push(bytes: Uint8Array): PayloadChunk[] {
    const chunks: PayloadChunk[] = []
    let i = 0
    while (i < bytes.length) {
      const at = this.received
      if (at < SNAPSHOT_HEADER_BYTES) {
        const take = Math.min(SNAPSHOT_HEADER_BYTES - at, bytes.length - i)
        this.headerBytes.set(bytes.subarray(i, i + take), at)
        i += take
        this.received += take
        if (this.received === SNAPSHOT_HEADER_BYTES) {
          const header = decodeSnapshotHeader(this.headerBytes, this.kind)
          checkLength(header, this.length)
          this.header = header
          const width = Math.max(1, this.header.counterBits ?? 0)
          this.payloadBytes = payloadBytesOf(this.header.parameters, this.header.counterBits)
          this.shardBytes = shardBytesOf(this.header.parameters) * width
        }
        continue
      }
      const payloadAt = at - SNAPSHOT_HEADER_BYTES
      if (payloadAt < this.payloadBytes) {
        const inShard = payloadAt % this.shardBytes
        const take = Math.min(this.shardBytes - inShard, this.payloadBytes - payloadAt, bytes.length - i)
        const piece = bytes.subarray(i, i + take)
        this.crc = crc32(piece, this.crc)
        chunks.push({ shard: Math.floor(payloadAt / this.shardBytes), offset: inShard, bytes: piece })
        i += take
        this.received += take
        continue
      }
      const trailerAt = payloadAt - this.payloadBytes
      if (trailerAt >= SNAPSHOT_TRAILER_BYTES) throw corrupt('has trailing bytes after its checksum')
      const take = Math.min(SNAPSHOT_TRAILER_BYTES - trailerAt, bytes.length - i)
      this.trailer.set(bytes.subarray(i, i + take), trailerAt)
      i += take
      this.received += take
    }
    return chunks
  }

  /** Checks that the whole snapshot arrived and its payload checksum matches. */
  finish(): SnapshotHeader {
    const header = this.getHeader()
    const expected = snapshotBytes(header.parameters, header.counterBits)
    if (this.received !== expected) throw corrupt(`is truncated: ${this.received} of ${expected} bytes`)
    if (new DataView(this.trailer.buffer).getUint32(0, true) !== this.crc) throw corrupt('payload fails its CRC-32 check')
    return header
  }
}

/** The 4-byte snapshot trailer: the payload's CRC-32, little-endian. */
export function trailer(crc: number): Uint8Array {
  const bytes = new Uint8Array(4)
  new DataView(bytes.buffer).setUint32(0, crc, true)
  return bytes
}
