import { counterKernels, crc32, snapshotFormat, type SnapshotKind } from '@bloomkit/core/store'
import { CliError } from './errors.js'

const { decodeSnapshotHeader, encodeSnapshotHeader, SNAPSHOT_HEADER_BYTES } = snapshotFormat
const { plainBitsOf } = counterKernels

/** The backends' name for a snapshot's kind. */
export function backendKind(kind: SnapshotKind): 'fixed' | 'counting' {
  return kind === 'counting' ? 'counting' : 'fixed'
}

/** "a counting filter" / "a plain filter", for messages. */
export function kindName(kind: SnapshotKind): string {
  return kind === 'counting' ? 'a counting filter' : 'a plain filter'
}

/**
 * A counting snapshot's stream turned into the plain snapshot of the same keys (docs/SPEC.md
 * 10.3): the header as version 1 with the same parameters and items, every non-zero counter a set
 * bit, a new CRC. Chunks may break anywhere: four counter bytes (8 counters) make one plain byte,
 * so a remainder is carried into the next chunk. The counting snapshot's own CRC is checked by the
 * caller (`verified`) as it passes.
 */
export async function* plainFromCounting(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array = new Uint8Array(0)
  let header: ReturnType<typeof decodeSnapshotHeader> | undefined
  let payloadLeft = 0
  let crc = 0
  for await (const chunk of chunks) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    if (header === undefined) {
      if (pending.length < SNAPSHOT_HEADER_BYTES) continue
      header = decodeSnapshotHeader(pending.subarray(0, SNAPSHOT_HEADER_BYTES), 'counting')
      payloadLeft = header.parameters.bits / 2
      yield encodeSnapshotHeader({ parameters: header.parameters, items: header.items })
      pending = pending.subarray(SNAPSHOT_HEADER_BYTES)
    }
    const usable = Math.min(payloadLeft, pending.length - (pending.length % 4))
    if (usable > 0) {
      const bits = plainBitsOf(pending.subarray(0, usable))
      crc = crc32(bits, crc)
      payloadLeft -= usable
      pending = pending.subarray(usable)
      yield bits
    }
  }
  if (header === undefined || payloadLeft !== 0) throw new CliError('CLI_TARGET', 'the counting snapshot ended early')
  const trailer = new Uint8Array(4)
  new DataView(trailer.buffer).setUint32(0, crc, true)
  yield trailer
}
