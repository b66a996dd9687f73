import { shardBitsOf, shardBytesOf, type FilterParameters } from '../parameters.js'
import { BLOCK_BITS, blockIndex, fmix32, PROBE_STEP, scaleToShard, shardOf } from '../bits/positions.js'

/** Counter bytes of one 512-position block. */
const BLOCK_COUNTER_BYTES = BLOCK_BITS / 2

/**
 * {@link ArrayProbe}'s counterpart for a counting filter in memory: adds, checks and removes one
 * key straight in the `Uint8Array` of 4-bit counters (docs/SPEC.md, section 10) from its two hashes,
 * with no batch and no allocation. The positions are those of the filter's hash scheme
 * (`fillRemixedPositions`, `fillPositions` or `fillBlockedPositions`),
 * computed as the loop goes; the memory backend's tests hold this path and the batch kernels
 * (counter-kernels.ts) to identical counters.
 *
 * Counter `p` of a shard: byte `⌊p / 2⌋`, high nibble for even `p`. A counter at 15 is never
 * decremented; `remove` decrements only when every counter of the key is non-zero.
 */
export class CounterProbe {
  private readonly bytes: Uint8Array
  private readonly shardBytes: number
  private readonly shardBits: number
  private readonly hashes: number
  private readonly shards: number
  private readonly blocks: number
  readonly blocked: boolean
  /** Whether classic positions are remixed per probe (scheme 3) rather than scheme 1's. */
  private readonly remixed: boolean

  /** @param bytes All of the filter's counters: `parameters.bits / 2` bytes, shard after shard. */
  constructor(parameters: FilterParameters, bytes: Uint8Array) {
    this.bytes = bytes
    this.shardBytes = shardBytesOf(parameters) * 4
    this.shardBits = shardBitsOf(parameters)
    this.hashes = parameters.hashes
    this.shards = parameters.shards
    this.blocks = this.shardBits / BLOCK_BITS
    this.blocked = parameters.layout === 'blocked'
    this.remixed = parameters.scheme === 3
  }

  /** Increments the key's counters (those below 15); true if at least one was 0 (the key was new). */
  add(a: number, b: number): boolean {
    const bytes = this.bytes
    let added = 0
    if (this.blocked) {
      const base = this.blockByte(a, b)
      const step = PROBE_STEP
      let h = b | 0
      for (let i = this.hashes; i > 0; i--) {
        const position = h >>> 23
        const index = base + (position >>> 1)
        const shift = (~position & 1) << 2
        const old = bytes[index]
        const counter = (old >>> shift) & 15
        added |= counter === 0 ? 1 : 0
        if (counter !== 15) bytes[index] = old + (1 << shift)
        h = Math.imul(h, step)
      }
      return added !== 0
    }
    const { shardBits, hashes, remixed } = this
    const base = shardOf(a, b, this.shards) * this.shardBytes
    let x = a | 0
    let y = b | 0
    for (let i = 0; i < hashes; i++) {
      const position = scaleToShard(remixed ? fmix32(x) : x >>> 0, shardBits)
      const index = base + (position >>> 1)
      const shift = (~position & 1) << 2
      const old = bytes[index]
      const counter = (old >>> shift) & 15
      added |= counter === 0 ? 1 : 0
      if (counter !== 15) bytes[index] = old + (1 << shift)
      x = (x + y) | 0
      y = (y + i + 1) | 0
    }
    return added !== 0
  }

  /** Whether every counter of the key is non-zero. */
  has(a: number, b: number): boolean {
    const bytes = this.bytes
    if (this.blocked) {
      const base = this.blockByte(a, b)
      const step = PROBE_STEP
      let h = b | 0
      for (let i = this.hashes; i > 0; i--) {
        const position = h >>> 23
        if (((bytes[base + (position >>> 1)] >>> ((~position & 1) << 2)) & 15) === 0) return false
        h = Math.imul(h, step)
      }
      return true
    }
    const { shardBits, hashes, remixed } = this
    const base = shardOf(a, b, this.shards) * this.shardBytes
    let x = a | 0
    let y = b | 0
    for (let i = 0; i < hashes; i++) {
      const position = scaleToShard(remixed ? fmix32(x) : x >>> 0, shardBits)
      if (((bytes[base + (position >>> 1)] >>> ((~position & 1) << 2)) & 15) === 0) return false
      x = (x + y) | 0
      y = (y + i + 1) | 0
    }
    return true
  }

  /** When the key reads present, decrements each of its counters below 15 and returns true; otherwise changes nothing. */
  remove(a: number, b: number): boolean {
    if (!this.has(a, b)) return false
    const bytes = this.bytes
    if (this.blocked) {
      const base = this.blockByte(a, b)
      const step = PROBE_STEP
      let h = b | 0
      for (let i = this.hashes; i > 0; i--) {
        const position = h >>> 23
        decrement(bytes, base + (position >>> 1), (~position & 1) << 2)
        h = Math.imul(h, step)
      }
      return true
    }
    const { shardBits, hashes, remixed } = this
    const base = shardOf(a, b, this.shards) * this.shardBytes
    let x = a | 0
    let y = b | 0
    for (let i = 0; i < hashes; i++) {
      const position = scaleToShard(remixed ? fmix32(x) : x >>> 0, shardBits)
      decrement(bytes, base + (position >>> 1), (~position & 1) << 2)
      x = (x + y) | 0
      y = (y + i + 1) | 0
    }
    return true
  }

  private blockByte(a: number, b: number): number {
    const block = blockIndex(a, this.blocks) * BLOCK_COUNTER_BYTES
    return this.shards === 1 ? block : shardOf(a, b, this.shards) * this.shardBytes + block
  }
}

/** Decrements the counter at `shift` of `bytes[index]` unless it is 0 or saturated (15, sticky). */
function decrement(bytes: Uint8Array, index: number, shift: number): void {
  const counter = (bytes[index] >>> shift) & 15
  if (counter !== 15 && counter !== 0) bytes[index] -= 1 << shift
}
