import { BloomError, type FilterParameters, type FilterParametersInput } from '@bloomkit/core'
import { checkParameters, shardBytesOf, type BitStore, type BitStoreCapabilities, type PositionBatch } from '@bloomkit/core/store'

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, byte) => {
  let n = 0
  for (let b = byte; b !== 0; b &= b - 1) n++
  return n
})

/**
 * Bits in one `Uint8Array`, shard after shard, each in Redis SETBIT order: the snapshot payload
 * as-is. Synchronous, no Node-only API, so it runs in browsers, workers, Deno and Bun.
 */
export class MemoryBitStore implements BitStore<true> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: true } = { sync: true, persistent: false, shared: false }
  readonly parameters: FilterParameters
  /** The bits; `shardBytes` per shard. Exposed for zero-copy hand-over (e.g. to a Worker). */
  readonly bytes: Uint8Array
  private readonly shardBytes: number
  private closed = false

  /**
   * @param bytes Existing bits to adopt (not copied); zeroed bits of the right size by default.
   */
  constructor(input: FilterParametersInput, bytes?: Uint8Array) {
    const parameters = checkParameters(input)
    this.parameters = parameters
    this.shardBytes = shardBytesOf(parameters)
    const length = parameters.bits / 8
    if (bytes !== undefined && bytes.length !== length) {
      throw new RangeError(`bytes must be ${length} long for these parameters; got ${bytes.length}`)
    }
    try {
      this.bytes = bytes ?? new Uint8Array(length)
    } catch (error) {
      throw new BloomError('BLOOM_INVALID_PARAMETER', `bits: ${parameters.bits} bits (${length} bytes) do not fit in one Uint8Array here`, { cause: error })
    }
  }

  setBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    const { bytes, shardBytes } = this
    const { positions, shards, hashes, size } = batch
    for (let i = 0, p = 0; i < size; i++) {
      const base = shards[i] * shardBytes
      let added = 0
      for (let end = p + hashes; p < end; p++) {
        const position = positions[p]
        const index = base + (position >>> 3)
        const mask = 0x80 >>> (position & 7)
        const old = bytes[index]
        added |= ~old & mask
        bytes[index] = old | mask
      }
      out[i] = added === 0 ? 0 : 1
    }
  }

  testBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    const { bytes, shardBytes } = this
    const { positions, shards, hashes, size } = batch
    for (let i = 0, p = 0; i < size; i++) {
      const base = shards[i] * shardBytes
      let found = 1
      for (let end = p + hashes; p < end; p++) {
        const position = positions[p]
        if ((bytes[base + (position >>> 3)] & (0x80 >>> (position & 7))) === 0) {
          found = 0
          p = end
          break
        }
      }
      out[i] = found
    }
  }

  countBits(): number[] {
    this.checkOpen()
    const counts: number[] = []
    for (let shard = 0; shard < this.parameters.shards; shard++) {
      let n = 0
      for (let i = shard * this.shardBytes, end = i + this.shardBytes; i < end; i++) n += POPCOUNT[this.bytes[i]]
      counts.push(n)
    }
    return counts
  }

  /** A view into the bits, not a copy: read it before the next write. */
  readShard(shard: number, offset: number, length: number): Uint8Array {
    this.checkOpen()
    const start = shard * this.shardBytes + offset
    return this.bytes.subarray(start, start + length)
  }

  writeShard(shard: number, offset: number, bytes: Uint8Array): void {
    this.checkOpen()
    this.bytes.set(bytes, shard * this.shardBytes + offset)
  }

  orShard(shard: number, offset: number, bytes: Uint8Array): void {
    this.checkOpen()
    const start = shard * this.shardBytes + offset
    for (let i = 0; i < bytes.length; i++) this.bytes[start + i] |= bytes[i]
  }

  clear(): void {
    this.checkOpen()
    this.bytes.fill(0)
  }

  close(): void {
    this.closed = true
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
