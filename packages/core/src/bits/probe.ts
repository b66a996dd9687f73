import { shardBitsOf, shardBytesOf, type FilterParameters } from '../parameters.js'
import { SET_BITS, type BitMode } from './bit-kernels.js'
import { BLOCK_BITS, blockIndex, fmix32, PROBE_STEP, scaleToShard, shardOf } from './positions.js'

const BLOCK_BYTES = BLOCK_BITS / 8

/**
 * Adds and checks one key straight in a `Uint8Array` that holds every shard, one after another
 * (the memory backend's bits), from the key's two hashes: no {@link PositionBatch}, no allocation.
 * It computes the same positions as `fillRemixedPositions`, `fillPositions` or `fillBlockedPositions`
 * (positions.ts, by the hash scheme), one
 * at a time as the loop needs them, so a classic `has` stops at its first unset bit; the memory
 * backend's tests hold both paths to setting identical bits. `a` and `b` are the hasher's pair
 * (`KeyHasher.pair`, signed: only their bits are used).
 *
 * The loops set and test bits inline rather than through bit-kernels.ts' `testBitSetBit`: with the
 * kernel call per bit, add and has ran 8–12 % slower (CPU-time A/B in one process, 1M keys), as the
 * extra call takes V8 past its inlining budget for the hash.
 */
export class ArrayProbe {
  private readonly bytes: Uint8Array
  private readonly shardBytes: number
  private readonly shardBits: number
  private readonly hashes: number
  private readonly shards: number
  /** Blocks per shard (blocked layout), so that no key pays for the division. */
  private readonly blocks: number
  /** Whether the layout is blocked; add and has pick their loop by it. */
  readonly blocked: boolean
  /** What {@link many}'s first pass read, kept so that the compiler cannot drop those loads. */
  touched = 0
  /** Whether classic positions are remixed per probe (scheme 3) rather than scheme 1's. */
  private readonly remixed: boolean

  /** @param bytes All of the filter's bits: `parameters.bits / 8` bytes, shard after shard. */
  constructor(parameters: FilterParameters, bytes: Uint8Array) {
    this.bytes = bytes
    this.shardBytes = shardBytesOf(parameters)
    this.shardBits = shardBitsOf(parameters)
    this.hashes = parameters.hashes
    this.shards = parameters.shards
    this.blocks = this.shardBits / BLOCK_BITS
    this.blocked = parameters.layout === 'blocked'
    this.remixed = parameters.scheme === 3
  }

  /** Sets the key's bits; true if at least one was unset (the key was new). */
  add(a: number, b: number): boolean {
    return this.blocked ? this.addBlocked(a, b) : this.addClassic(a, b)
  }

  /** Whether every bit of the key is set. */
  has(a: number, b: number): boolean {
    return this.blocked ? this.hasBlocked(a, b) : this.hasClassic(a, b)
  }

  // One small method per layout, so that add and has stay small enough for V8 to inline them and
  // the hash into the filter's add and has.

  // Schemes 1 and 3 share these loops: `remix` is the same for every probe of a filter, so the
  // branch is always predicted, and add and has stay small enough to inline.
  private addClassic(a: number, b: number): boolean {
    const { bytes, shardBits, hashes, remixed } = this
    const base = shardOf(a, b, this.shards) * this.shardBytes
    let x = a | 0
    let y = b | 0
    let added = 0
    for (let i = 0; i < hashes; i++) {
      const position = scaleToShard(remixed ? fmix32(x) : x >>> 0, shardBits)
      const index = base + (position >>> 3)
      const mask = 0x80 >>> (position & 7)
      const old = bytes[index]
      added |= ~old & mask
      bytes[index] = old | mask
      x = (x + y) | 0
      y = (y + i + 1) | 0
    }
    return added !== 0
  }

  private hasClassic(a: number, b: number): boolean {
    const { bytes, shardBits, hashes, remixed } = this
    const base = shardOf(a, b, this.shards) * this.shardBytes
    let x = a | 0
    let y = b | 0
    for (let i = 0; i < hashes; i++) {
      const position = scaleToShard(remixed ? fmix32(x) : x >>> 0, shardBits)
      if ((bytes[base + (position >>> 3)] & (0x80 >>> (position & 7))) === 0) return false
      x = (x + y) | 0
      y = (y + i + 1) | 0
    }
    return true
  }

  private addBlocked(a: number, b: number): boolean {
    const bytes = this.bytes
    const base = this.blockByte(a, b)
    const step = PROBE_STEP // read once: an imported binding is a cell V8 reloads on every use
    let h = b | 0
    let added = 0
    for (let i = this.hashes; i > 0; i--) {
      const bit = h >>> 23
      const index = base + (bit >>> 3)
      const mask = 0x80 >>> (bit & 7)
      const old = bytes[index]
      added |= ~old & mask
      bytes[index] = old | mask
      h = Math.imul(h, step)
    }
    return added !== 0
  }

  private hasBlocked(a: number, b: number): boolean {
    const bytes = this.bytes
    const base = this.blockByte(a, b)
    // No early exit: the other probes are in the same cache line, so reading them all costs less
    // than the mispredicted branch an early exit takes on about every other absent key.
    const step = PROBE_STEP
    let missing = 0
    let h = b | 0
    for (let i = this.hashes; i > 0; i--) {
      const bit = h >>> 23
      missing |= ~bytes[base + (bit >>> 3)] & (0x80 >>> (bit & 7))
      h = Math.imul(h, step)
    }
    return missing === 0
  }

  /**
   * Adds ({@link SET_BITS}) or checks (`TEST_BITS`) `count` keys whose hashes are `pairs[2i]`, `pairs[2i + 1]`, writing 1 or 0
   * to `out[i]` (new, or present), in key order, so a key twice is new only the first time. Blocked
   * layout: `starts[i]` must hold the key's {@link blockByte}, which the caller computes while it
   * hashes (in a loop of its own here, that arithmetic cost hasMany ~20 % at 10M keys). Then two
   * passes: first a load of every key's block, then the probes, so that the CPU has the block loads
   * of many keys in flight at once instead of waiting for one cache miss per key (a key's hash sits
   * between its loads and the next key's in a loop of single calls). Classic layout: `starts[i]` must
   * hold the byte of the key's first probe ({@link firstByte}); the loads overlap the same way, then
   * the keys go one by one (an absent key is mostly settled by that first probe, as in a single `has`).
   */
  many(mode: BitMode, pairs: Int32Array, count: number, starts: Int32Array, out: Uint8Array): void {
    const { bytes, hashes } = this
    // A loop of nothing but loads (each block's first byte: large filters' blocks are cache lines,
    // see MemoryBitStore): how many misses the CPU keeps in flight is bounded by how many iterations
    // fit in its reorder buffer, so anything else in this loop costs overlap (a second load per key
    // and the block arithmetic here made hasMany ~1.5x slower at 10M keys).
    // Unrolled by 8: fewer loop instructions between the loads let more of them into the reorder
    // buffer at once (hasMany of 1000 keys on a 10M filter ~20 % faster than one load an iteration).
    const set = mode === SET_BITS
    let touched = 0
    let t = 0
    for (; t + 8 <= count; t += 8) {
      touched |= bytes[starts[t]] | bytes[starts[t + 1]] | bytes[starts[t + 2]] | bytes[starts[t + 3]] |
        bytes[starts[t + 4]] | bytes[starts[t + 5]] | bytes[starts[t + 6]] | bytes[starts[t + 7]]
    }
    for (; t < count; t++) touched |= bytes[starts[t]]
    this.touched = touched
    if (!this.blocked) {
      // One loop per mode, as below.
      if (set) for (let i = 0; i < count; i++) out[i] = this.addClassic(pairs[2 * i], pairs[2 * i + 1]) ? 1 : 0
      else for (let i = 0; i < count; i++) out[i] = this.hasClassic(pairs[2 * i], pairs[2 * i + 1]) ? 1 : 0
      return
    }
    // Probe j's hash is h·STEP^j. Two chains, h·STEP^2i and h·STEP^(2i+1), each stepped by STEP²:
    // the same bits in the same order, with half the multiplications in a row (their latency, not
    // the loads, bounded the probe pass once the blocks were in cache).
    const step = PROBE_STEP
    const step2 = Math.imul(step, step)
    // One loop per mode, so that a check's loop carries no store and no branch on `set`.
    if (set) {
      for (let i = 0; i < count; i++) {
        const base = starts[i]
        let h = pairs[2 * i + 1] | 0
        let g = Math.imul(h, step)
        let missing = 0
        let j = hashes
        for (; j > 1; j -= 2) {
          let bit = h >>> 23
          let index = base + (bit >>> 3)
          let mask = 0x80 >>> (bit & 7)
          let old = bytes[index]
          missing |= ~old & mask
          bytes[index] = old | mask
          bit = g >>> 23
          index = base + (bit >>> 3)
          mask = 0x80 >>> (bit & 7)
          old = bytes[index]
          missing |= ~old & mask
          bytes[index] = old | mask
          h = Math.imul(h, step2)
          g = Math.imul(g, step2)
        }
        if (j === 1) {
          const bit = h >>> 23
          const index = base + (bit >>> 3)
          const mask = 0x80 >>> (bit & 7)
          const old = bytes[index]
          missing |= ~old & mask
          bytes[index] = old | mask
        }
        out[i] = missing !== 0 ? 1 : 0
      }
      return
    }
    for (let i = 0; i < count; i++) {
      const base = starts[i]
      let h = pairs[2 * i + 1] | 0
      let g = Math.imul(h, step)
      let missing = 0
      let j = hashes
      for (; j > 1; j -= 2) {
        const bit = h >>> 23
        const bit2 = g >>> 23
        missing |= (~bytes[base + (bit >>> 3)] & (0x80 >>> (bit & 7))) | (~bytes[base + (bit2 >>> 3)] & (0x80 >>> (bit2 & 7)))
        h = Math.imul(h, step2)
        g = Math.imul(g, step2)
      }
      if (j === 1) {
        const bit = h >>> 23
        missing |= ~bytes[base + (bit >>> 3)] & (0x80 >>> (bit & 7))
      }
      out[i] = missing === 0 ? 1 : 0
    }
  }

  /** The byte of the key's first probe (classic layout): where {@link has} reads first. */
  firstByte(a: number, b: number): number {
    const position = scaleToShard(this.remixed ? fmix32(a | 0) : a >>> 0, this.shardBits)
    return shardOf(a, b, this.shards) * this.shardBytes + (position >>> 3)
  }

  /** The first byte of the key's block (blocked layout): its shard's start plus blockIndex, in bytes. */
  blockByte(a: number, b: number): number {
    const block = blockIndex(a, this.blocks) * BLOCK_BYTES
    // shardOf returns 0 for one shard too, but V8 cannot fold 0 * shardBytes + block away.
    return this.shards === 1 ? block : shardOf(a, b, this.shards) * this.shardBytes + block
  }
}
