import type { PositionBatch } from '../bits/position-batch.js'

/**
 * The counter kernels of a counting filter (docs/SPEC.md, section 10): a 4-bit counter in place of
 * each bit. Counter `p` of a shard is in byte `⌊p / 2⌋` of the shard's counter bytes, in the high
 * nibble (bits 7–4) when `p` is even and the low nibble (bits 3–0) when it is odd: Redis
 * `BITFIELD … u4 #p` order. Stores that hold counters in a `Uint8Array` (memory, a LevelDB page)
 * call these rather than writing the loops again.
 *
 * The promise they keep: a counter at {@link COUNTER_MAX} is never decremented (sticky), so
 * counters that overflowed can never take a key that was added out of the filter; and a key whose
 * counters are not all non-zero is never decremented, so removing a key that reads absent changes
 * nothing.
 */

/** Bits per counter. */
export const COUNTER_BITS = 4
/** The value a counter saturates at and then keeps. */
export const COUNTER_MAX = 15

/** Counter `position` of the shard that starts at byte `base`. */
export function counterAt(bytes: Uint8Array, base: number, position: number): number {
  return (bytes[base + (position >>> 1)] >>> ((~position & 1) << 2)) & 15
}

/**
 * Increments one key's counters (those below the maximum), atomically as far as the caller holds
 * the bytes. Returns 1 when at least one counter was 0 before (the key was new), else 0.
 */
export function incrementKey(bytes: Uint8Array, base: number, positions: Uint32Array, from: number, hashes: number): number {
  let added = 0
  for (let p = from, end = from + hashes; p < end; p++) {
    const position = positions[p]
    const index = base + (position >>> 1)
    const shift = (~position & 1) << 2
    const old = bytes[index]
    const counter = (old >>> shift) & 15
    added |= counter === 0 ? 1 : 0
    if (counter !== 15) bytes[index] = old + (1 << shift)
  }
  return added
}

/** 1 when every counter of the key is non-zero (the key reads present), else 0. */
export function testKeyCounters(bytes: Uint8Array, base: number, positions: Uint32Array, from: number, hashes: number): number {
  for (let p = from, end = from + hashes; p < end; p++) if (counterAt(bytes, base, positions[p]) === 0) return 0
  return 1
}

/**
 * Removes one key: when every counter reads non-zero, decrements each that is below the maximum
 * (a saturated counter stays) and returns 1; otherwise changes nothing and returns 0.
 */
export function decrementKey(bytes: Uint8Array, base: number, positions: Uint32Array, from: number, hashes: number): number {
  if (testKeyCounters(bytes, base, positions, from, hashes) === 0) return 0
  for (let p = from, end = from + hashes; p < end; p++) {
    const position = positions[p]
    const index = base + (position >>> 1)
    const shift = (~position & 1) << 2
    const counter = (bytes[index] >>> shift) & 15
    // A position repeated within one key was incremented once per repeat; it is decremented as
    // often, and a counter never goes below 0 even if another key's removal got there first.
    if (counter !== 15 && counter !== 0) bytes[index] -= 1 << shift
  }
  return 1
}

/** Which counter operation a batch kernel runs. */
export type CounterMode = 'increment' | 'decrement' | 'test'

/**
 * A whole batch over shards laid out one after another in `bytes`, `shardBytes` counter bytes
 * each: `out[i]` as {@link incrementKey}, {@link decrementKey} or {@link testKeyCounters} gives it
 * for key `i`, in batch order (a key repeated in one batch is counted as often as it appears).
 */
export function counterBatch(bytes: Uint8Array, shardBytes: number, batch: PositionBatch, out: Uint8Array, mode: CounterMode): void {
  const { positions, shards, hashes, size } = batch
  const kernel = mode === 'increment' ? incrementKey : mode === 'decrement' ? decrementKey : testKeyCounters
  for (let i = 0; i < size; i++) out[i] = kernel(bytes, shards[i] * shardBytes, positions, i * hashes, hashes)
}

/** Non-zero and saturated counters in `bytes[from … to − 1]`. */
export function countCounters(bytes: Uint8Array, from = 0, to = bytes.length): { nonZero: number; saturated: number } {
  let nonZero = 0
  let saturated = 0
  for (let i = from; i < to; i++) {
    const byte = bytes[i]
    if (byte === 0) continue
    const high = byte >>> 4
    const low = byte & 15
    nonZero += (high !== 0 ? 1 : 0) + (low !== 0 ? 1 : 0)
    saturated += (high === 15 ? 1 : 0) + (low === 15 ? 1 : 0)
  }
  return { nonZero, saturated }
}

/**
 * Adds the counters in `bytes` into `target` from byte `at`, each sum capped at the maximum (how
 * two counting filters merge: the keys of both, each counted as often as in either plus the other).
 */
export function addCounters(target: Uint8Array, at: number, bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) {
    const a = target[at + i]
    const b = bytes[i]
    if (b === 0) continue
    const high = Math.min(15, (a >>> 4) + (b >>> 4))
    const low = Math.min(15, (a & 15) + (b & 15))
    target[at + i] = (high << 4) | low
  }
}

/**
 * The plain filter's bits of counter bytes (docs/SPEC.md, section 10.3): bit `p` set where counter
 * `p` is non-zero. `counters` holds whole bytes from a counter at an even position, so its
 * `counters.length × 2` counters become `counters.length / 4` bytes of bits; its length must be a
 * multiple of 4.
 */
export function plainBitsOf(counters: Uint8Array): Uint8Array {
  const bits = new Uint8Array(counters.length >>> 2)
  for (let i = 0; i < bits.length; i++) {
    let byte = 0
    for (let j = 0; j < 4; j++) {
      const c = counters[i * 4 + j]
      byte |= ((c & 0xf0) !== 0 ? 0x80 >>> (2 * j) : 0) | ((c & 0x0f) !== 0 ? 0x40 >>> (2 * j) : 0)
    }
    bits[i] = byte
  }
  return bits
}
