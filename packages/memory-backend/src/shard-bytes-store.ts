import { BloomError, type FilterParameters, type FilterParametersInput } from '@bloomkit/core'
import { checkParameters, shardBytesOf } from '@bloomkit/core/store'

/**
 * What the memory stores share: every shard's bytes in one `Uint8Array`, shard after shard (the
 * snapshot payload as-is), and the calls that only move bytes. `MemoryBitStore` (a bit a position)
 * and `MemoryCounterStore` (a 4-bit counter a position) say what the bytes mean, how they are
 * set, tested and counted, and how two filters' bytes merge.
 */
export abstract class ShardBytesStore {
  readonly parameters: FilterParameters
  /** Every shard's bytes, `shardBytes` each. */
  readonly bytes: Uint8Array
  protected readonly shardBytes: number
  private closed = false

  /**
   * @param positionBits Bits per position: 1, or 4 for counters.
   * @param what What the bytes hold, for the error message: `bits` or `counters`.
   * @param allocate Makes zeroed bytes of the given length.
   * @param bytes Existing bytes to adopt (not copied).
   */
  protected constructor(input: FilterParametersInput, positionBits: number, what: string, allocate: (length: number) => Uint8Array, bytes?: Uint8Array) {
    const parameters = checkParameters(input)
    this.parameters = parameters
    this.shardBytes = shardBytesOf(parameters) * positionBits
    const length = (parameters.bits * positionBits) / 8
    if (bytes !== undefined && bytes.length !== length) throw new RangeError(`bytes must be ${length} long for these parameters; got ${bytes.length}`)
    try {
      this.bytes = bytes ?? allocate(length)
    } catch (error) {
      throw new BloomError('BLOOM_INVALID_PARAMETER', `bits: ${parameters.bits} ${what} (${length} bytes) do not fit in one Uint8Array here`, { cause: error })
    }
  }

  /** A view into the bytes, not a copy: read it before the next write. */
  readShard(shard: number, offset: number, length: number): Uint8Array {
    this.checkOpen()
    const start = shard * this.shardBytes + offset
    return this.bytes.subarray(start, start + length)
  }

  writeShard(shard: number, offset: number, bytes: Uint8Array): void {
    this.checkOpen()
    this.bytes.set(bytes, shard * this.shardBytes + offset)
  }

  clear(): void {
    this.checkOpen()
    this.bytes.fill(0)
  }

  close(): void {
    this.closed = true
  }

  protected checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
