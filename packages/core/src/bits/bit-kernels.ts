import type { PositionBatch } from './position-batch.js'

/**
 * The bit kernels every store shares: one body that tests a key's bits or sets them, as RedisBloom's
 * `test_bit_set_bit(buf, x, mode)` serves both BF.EXISTS and BF.ADD. Bits are in Redis SETBIT order
 * (docs/SPEC.md): bit `p` of a shard is bit `7 − p % 8`, counting from the least significant, of
 * byte `⌊p / 8⌋`. Stores that hold bits in a `Uint8Array` (memory, a LevelDB page cache, a Redis
 * shard read whole) call these rather than writing the loop again.
 */

/** Only read the bits. */
export const TEST_BITS = 0
/** Read the bits and set those that were unset. */
export const SET_BITS = 1
/** What a kernel does besides reading: {@link TEST_BITS} or {@link SET_BITS}. */
export type BitMode = typeof TEST_BITS | typeof SET_BITS

/**
 * Bit `position` of the shard that starts at byte `base` of `bytes`: 1 if it was set before the
 * call, 0 if not; with {@link SET_BITS} it is set afterwards either way. Branch-free, so that a
 * caller passing a constant `mode` gets a loop V8 compiles to a load, an OR and a store per bit.
 */
export function testBitSetBit(bytes: Uint8Array, base: number, position: number, mode: BitMode): number {
  const index = base + (position >>> 3)
  const old = bytes[index]
  // Literals rather than SET_BITS: an imported or module binding is a cell V8 reloads on every use.
  if (mode === 1) bytes[index] = old | (0x80 >>> (position & 7))
  return (old >>> (~position & 7)) & 1
}

/**
 * One key: its `hashes` positions `positions[from …]` in the shard that starts at byte `base`.
 * With {@link TEST_BITS}: 1 when every bit is set (stops at the first unset one), else 0.
 * With {@link SET_BITS}: sets them all; 1 when at least one was unset (the key was new), else 0.
 */
export function testOrSetKey(bytes: Uint8Array, base: number, positions: Uint32Array, from: number, hashes: number, mode: BitMode): number {
  const end = from + hashes
  if (mode === 1) {
    let all = 1
    for (let p = from; p < end; p++) all &= testBitSetBit(bytes, base, positions[p], 1)
    return all ^ 1
  }
  for (let p = from; p < end; p++) if (testBitSetBit(bytes, base, positions[p], 0) === 0) return 0
  return 1
}

/**
 * A whole batch over shards laid out one after another in `bytes`, `shardBytes` each (a memory
 * store, a filter read whole): `out[i]` as {@link testOrSetKey} gives it for key `i`. Keys run in
 * batch order, so a key that repeats an earlier one of the same batch reads as not new.
 */
export function testOrSetBatch(bytes: Uint8Array, shardBytes: number, batch: PositionBatch, out: Uint8Array, mode: BitMode): void {
  const { positions, shards, hashes, size } = batch
  for (let i = 0; i < size; i++) out[i] = testOrSetKey(bytes, shards[i] * shardBytes, positions, i * hashes, hashes, mode)
}

/**
 * The keys `keys[from … to − 1]` of a batch that all live in the shard held whole in `shard` (a
 * {@link PositionBatch.groupByShard} group): `out[keys[k]]` as {@link testOrSetKey} gives it.
 */
export function testOrSetGroup(
  shard: Uint8Array,
  positions: Uint32Array,
  hashes: number,
  keys: Uint32Array,
  from: number,
  to: number,
  out: Uint8Array,
  mode: BitMode,
): void {
  for (let k = from; k < to; k++) out[keys[k]] = testOrSetKey(shard, 0, positions, keys[k] * hashes, hashes, mode)
}

/** The bits set in each byte value. */
const POPCOUNT = Uint8Array.from({ length: 256 }, (_, byte) => {
  let n = 0
  for (let b = byte; b !== 0; b &= b - 1) n++
  return n
})

/** The number of set bits in `bytes[from … to − 1]` (all of it by default). */
export function popcount(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let n = 0
  for (let i = from; i < to; i++) n += POPCOUNT[bytes[i]]
  return n
}

/** ORs `bytes` into `target` from byte `at` (merging two filters' bits). */
export function orInto(target: Uint8Array, at: number, bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) target[at + i] |= bytes[i]
}
