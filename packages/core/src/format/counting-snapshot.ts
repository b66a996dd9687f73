import { COUNTER_BITS } from '../counting/counter-kernels.js'
import { crc32 } from './crc32.js'
import { encodeSnapshotHeader, type SnapshotHeader } from './snapshot.js'
import { COUNTING_SNAPSHOT_VERSION } from './versions.js'

/**
 * The 40-byte header of a counting snapshot (docs/SPEC.md, section 10.2): version 1's with version 3
 * and the counter width in byte 32 (in a module of its own, so plain filters' bundles do without it).
 */
export function encodeCountingHeader(header: SnapshotHeader): Uint8Array {
  const bytes = encodeSnapshotHeader(header)
  const view = new DataView(bytes.buffer)
  view.setUint16(4, COUNTING_SNAPSHOT_VERSION, true)
  view.setUint8(32, COUNTER_BITS)
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  return bytes
}
