import type { PositionBatch } from '@bloomkit/core/store'

/**
 * Touched counter bytes closer than this share one read and one write in the counting script:
 * copying a gap costs less than a `redis.call` more (~0.7 µs, a few KiB of copying) up to here.
 */
const RUN_GAP_BYTES = 512

/** How many positions one script call may carry: indexes in {@link counterBatchArgs}' sort key stay below it. */
const INDEX_SPAN = 1 << 20

/**
 * The arguments of `COUNTER_BATCH` (counter-scripts.ts) for the keys `keys` of one shard, worked
 * out here so that the script does no more than it must to stay atomic: read the touched bytes,
 * apply each key to its counters, write the changed bytes back. The script's cost is Lua's (about
 * 1 µs per counter before, in decoding, table churn and one `BITFIELD u4` operation per counter),
 * so the client sorts and numbers the touched bytes, and sends numbers as MessagePack arrays,
 * which `cmsgpack.unpack` turns into Lua tables in C.
 *
 * - `runs`: per run of touched bytes (gaps under {@link RUN_GAP_BYTES}), its first and last byte
 *   in the shard and how many touched bytes it holds.
 * - `offsets`: per touched byte, in ascending order, its 1-based offset in its run.
 * - `counters`: per key, `hashes` counter numbers: touched byte `i` (1-based) holds counters
 *   `2i − 1` (high nibble: even positions) and `2i` (low nibble: odd positions).
 * - `refs` (when the script `writes`): per touched byte, its `BITFIELD … u8` offset, `#byte`.
 */
export function counterBatchArgs(batch: PositionBatch, keys: Uint32Array, writes: boolean): { runs: Buffer; offsets: Buffer; counters: Buffer; refs: Buffer | undefined } {
  const k = batch.hashes
  const count = keys.length * k
  // Byte × 2^20 + the position's index in this group, sorted: the touched bytes in order, each
  // with the positions on it (exact in a double: bytes < 2^31, indexes < 2^20 per chunk).
  const order = new Float64Array(count)
  const positions = new Uint32Array(count)
  for (let i = 0; i < keys.length; i++) {
    const from = keys[i] * k
    for (let j = 0; j < k; j++) {
      const p = batch.positions[from + j]
      positions[i * k + j] = p
      order[i * k + j] = (p >>> 1) * INDEX_SPAN + i * k + j
    }
  }
  order.sort()
  const counters = new Uint32Array(count)
  const offsets: number[] = []
  const refs: string[] = []
  const runs: number[] = []
  let touched = 0
  let last = -1
  let runStart = 0
  let runFirst = 0
  for (let s = 0; s < count; s++) {
    const entry = order[s]
    const index = entry % INDEX_SPAN
    const byte = (entry - index) / INDEX_SPAN
    if (byte !== last) {
      if (last < 0 || byte - last > RUN_GAP_BYTES) {
        if (last >= 0) runs.push(runStart, last, touched - runFirst)
        runStart = byte
        runFirst = touched
      }
      offsets.push(byte - runStart + 1)
      if (writes) refs.push(`#${byte}`)
      touched++
      last = byte
    }
    counters[index] = 2 * touched - 1 + (positions[index] & 1)
  }
  if (last >= 0) runs.push(runStart, last, touched - runFirst)
  return { runs: packUints(runs), offsets: packUints(offsets), counters: packUints(counters), refs: writes ? packStrings(refs) : undefined }
}

/** A MessagePack array of unsigned integers below 2^32, each in its shortest form. */
export function packUints(values: ArrayLike<number>): Buffer {
  const n = values.length
  const out = Buffer.allocUnsafe(5 + 5 * n)
  let at = arrayHeader(out, n)
  for (let i = 0; i < n; i++) {
    const v = values[i]
    if (v < 0x80) out[at++] = v
    else if (v < 0x100) {
      out[at++] = 0xcc
      out[at++] = v
    } else if (v < 0x10000) {
      out[at++] = 0xcd
      out[at++] = v >>> 8
      out[at++] = v & 0xff
    } else {
      out[at++] = 0xce
      out.writeUInt32BE(v, at)
      at += 4
    }
  }
  return out.subarray(0, at)
}

/** A MessagePack array of short ASCII strings (under 32 bytes each: fixstr). */
export function packStrings(values: readonly string[]): Buffer {
  const n = values.length
  let length = 5
  for (const value of values) length += 1 + value.length
  const out = Buffer.allocUnsafe(length)
  let at = arrayHeader(out, n)
  for (const value of values) {
    out[at++] = 0xa0 | value.length
    at += out.write(value, at, 'latin1')
  }
  return out.subarray(0, at)
}

/** Writes a MessagePack array header for `n` items at the start of `out`; returns its length. */
function arrayHeader(out: Buffer, n: number): number {
  if (n < 16) {
    out[0] = 0x90 | n
    return 1
  }
  if (n < 0x10000) {
    out[0] = 0xdc
    out.writeUInt16BE(n, 1)
    return 3
  }
  out[0] = 0xdd
  out.writeUInt32BE(n, 1)
  return 5
}
