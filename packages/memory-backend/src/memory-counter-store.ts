import { BloomError, type FilterParameters, type FilterParametersInput } from '@bloomkit/core'
import { addCounters, checkParameters, counterBatch, countCounters, counterShardBytesOf, type BitStoreCapabilities, type CounterStore, type PositionBatch } from '@bloomkit/core/store'

/**
 * A counting filter's 4-bit counters in one `Uint8Array` (docs/SPEC.md, section 10), shard after
 * shard: exactly `bits / 2` bytes, the counting snapshot's payload as-is. Synchronous; every call
 * runs to its end before another starts, so each key's counters change as one.
 */
export class MemoryCounterStore implements CounterStore<true> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: true } = { sync: true, persistent: false, shared: false }
  readonly parameters: FilterParameters
  readonly counterBits = 4
  /** The counters: `bits / 2` bytes, 4 bits per position. */
  readonly bytes: Uint8Array
  private readonly shardBytes: number
  private closed = false

  /** @param bytes Existing counters to adopt (not copied); zeroed counters of the right size by default. */
  constructor(input: FilterParametersInput, bytes?: Uint8Array) {
    const parameters = checkParameters(input)
    this.parameters = parameters
    this.shardBytes = counterShardBytesOf(parameters)
    const length = parameters.bits / 2
    if (bytes !== undefined && bytes.length !== length) throw new RangeError(`bytes must be ${length} long for these parameters; got ${bytes.length}`)
    try {
      this.bytes = bytes ?? new Uint8Array(length)
    } catch (error) {
      throw new BloomError('BLOOM_INVALID_PARAMETER', `bits: ${parameters.bits} counters (${length} bytes) do not fit in one Uint8Array here`, { cause: error })
    }
  }

  setBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    counterBatch(this.bytes, this.shardBytes, batch, out, 'increment')
  }

  testBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    counterBatch(this.bytes, this.shardBytes, batch, out, 'test')
  }

  removeBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    counterBatch(this.bytes, this.shardBytes, batch, out, 'decrement')
  }

  countBits(): number[] {
    this.checkOpen()
    const counts: number[] = []
    for (let shard = 0, at = 0; shard < this.parameters.shards; shard++, at += this.shardBytes) counts.push(countCounters(this.bytes, at, at + this.shardBytes).nonZero)
    return counts
  }

  countSaturated(): number {
    this.checkOpen()
    return countCounters(this.bytes).saturated
  }

  /** A view into the counters, not a copy: read it before the next write. */
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
    addCounters(this.bytes, shard * this.shardBytes + offset, bytes)
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
