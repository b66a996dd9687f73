import type { PositionBatch } from '@bloomkit/core/store'

/**
 * Touched counter bytes closer than this share one read and one write in the counting script:
 * copying a gap costs less than a `redis.call` more (~0.7 µs, a few KiB of copying) up to here.
 */
const RUN_GAP_BYTES = 512

/**
 * The longest run: a dense batch (many keys in a small shard) would otherwise make the whole shard
 * one run, read and written as one string by a script that blocks its node meanwhile.
 */
const RUN_MAX_BYTES = 64 * 1024

/**
 * The arguments of `COUNTER_BATCH` (counter-scripts.ts) for the keys `keys` of one shard, worked
 * out here so that the script does no more than it must to stay atomic: read the touched bytes,
 * apply each key to its counters, write the changed runs back. The script's cost is Lua's, so the
 * client sorts and numbers the touched bytes, and sends numbers as MessagePack arrays, which
 * `cmsgpack.unpack` turns into Lua tables in C.
 *
 * - `runs`: per run of touched bytes (gaps under {@link RUN_GAP_BYTES}, at most
 *   {@link RUN_MAX_BYTES} long), its first and last byte in the shard (both touched) and how many
 *   touched bytes it holds.
 * - `offsets`: per touched byte, in ascending order, its 1-based offset in its run.
 * - `counters`: per key, `hashes` counters: `i` for the high nibble of touched byte `i` (1-based;
 *   even positions), `−i` for its low nibble (odd positions).
 */
export function counterBatchArgs(batch: PositionBatch, keys: Uint32Array): { runs: Buffer; offsets: Buffer; counters: Buffer } {
  const k = batch.hashes
  const count = keys.length * k
  // Each position's byte, then the positions in byte order (ties in batch order): the touched
  // bytes in order, each with the positions on it.
  const positions = new Uint32Array(count)
  const bytes = new Uint32Array(count)
  for (let i = 0; i < keys.length; i++) {
    const from = keys[i] * k
    for (let j = 0; j < k; j++) {
      const p = batch.positions[from + j]
      positions[i * k + j] = p
      bytes[i * k + j] = p >>> 1
    }
  }
  const order = sortedByByte(bytes)
  const counters = new Int32Array(count)
  const offsets: number[] = []
  const runs: number[] = []
  let touched = 0
  let last = -1
  let runStart = 0
  let runFirst = 0
  for (let s = 0; s < count; s++) {
    const index = order[s]
    const byte = bytes[index]
    if (byte !== last) {
      if (last < 0 || byte - last > RUN_GAP_BYTES || byte - runStart >= RUN_MAX_BYTES) {
        if (last >= 0) runs.push(runStart, last, touched - runFirst)
        runStart = byte
        runFirst = touched
      }
      offsets.push(byte - runStart + 1)
      touched++
      last = byte
    }
    counters[index] = positions[index] & 1 ? -touched : touched
  }
  if (last >= 0) runs.push(runStart, last, touched - runFirst)
  return { runs: packInts(runs), offsets: packInts(offsets), counters: packInts(counters) }
}

/** Bits per pass of {@link sortedByByte}: three passes cover any shard byte (below 2^32). */
const RADIX_BITS = 11

/**
 * The indexes of `bytes` ordered by value, equal values in index order: an LSD radix sort, as
 * many passes as the largest value needs (two for shards under 4 MiB). About 10× faster here than
 * sorting a Float64Array of byte × 2^20 + index, which took ~1 µs a key, a fifth of what a plain
 * filter's addMany costs a key in all.
 */
export function sortedByByte(bytes: Uint32Array): Uint32Array {
  const count = bytes.length
  let order = new Uint32Array(count)
  let spare = new Uint32Array(count)
  let max = 0
  for (let i = 0; i < count; i++) {
    order[i] = i
    if (bytes[i] > max) max = bytes[i]
  }
  const buckets = new Uint32Array(1 << RADIX_BITS)
  for (let shift = 0; shift < 32 && max >>> shift !== 0; shift += RADIX_BITS) {
    buckets.fill(0)
    for (let i = 0; i < count; i++) buckets[(bytes[i] >>> shift) & ((1 << RADIX_BITS) - 1)]++
    for (let d = 0, at = 0; d < buckets.length; d++) {
      const n = buckets[d]
      buckets[d] = at
      at += n
    }
    for (let i = 0; i < count; i++) {
      const index = order[i]
      spare[buckets[(bytes[index] >>> shift) & ((1 << RADIX_BITS) - 1)]++] = index
    }
    const swap = order
    order = spare
    spare = swap
  }
  return order
}

/** A MessagePack array of integers in (−2^31, 2^32), each in its shortest form. */
export function packInts(values: ArrayLike<number>): Buffer {
  const n = values.length
  const out = Buffer.allocUnsafe(5 + 5 * n)
  let at = arrayHeader(out, n)
  for (let i = 0; i < n; i++) {
    const v = values[i]
    if (v >= 0) {
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
    } else if (v >= -32) out[at++] = v & 0xff
    else if (v >= -0x8000) {
      out[at++] = 0xd1
      out.writeInt16BE(v, at)
      at += 2
    } else {
      out[at++] = 0xd2
      out.writeInt32BE(v, at)
      at += 4
    }
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
