import { addCounters, counterBatch, countCounters } from '../counting/counter-kernels.js'
import type { CounterStore } from '../counting/counting-bloom-filter.js'
import type { BitStoreCapabilities } from '../bit-store.js'
import { BloomError } from '../errors.js'
import { checkParameters, shardBytesOf, type FilterParameters, type FilterParametersInput } from '../parameters.js'
import type { PositionBatch } from '../bits/position-batch.js'

/**
 * A plain, asynchronous {@link CounterStore} over one `Uint8Array` of counters, through core's
 * counter kernels: what the counting filter's async paths and the spec vectors are checked on.
 */
export class ReferenceCounterStore implements CounterStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: false, shared: false }
  readonly parameters: FilterParameters
  readonly counterBits = 4
  /** The counters, `bits / 2` bytes, shard after shard. */
  readonly bytes: Uint8Array
  private readonly shardBytes: number
  private closed = false

  constructor(parameters: FilterParametersInput) {
    this.parameters = checkParameters(parameters)
    this.shardBytes = shardBytesOf(this.parameters) * 4
    this.bytes = new Uint8Array(this.parameters.bits / 2)
  }

  async setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    this.run(batch, out, 'increment')
  }

  async testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    this.run(batch, out, 'test')
  }

  async removeBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    this.run(batch, out, 'decrement')
  }

  async countBits(): Promise<number[]> {
    this.checkOpen()
    return Array.from({ length: this.parameters.shards }, (_, s) => countCounters(this.bytes, s * this.shardBytes, (s + 1) * this.shardBytes).nonZero)
  }

  async countSaturated(): Promise<number> {
    this.checkOpen()
    return countCounters(this.bytes).saturated
  }

  async readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    this.checkOpen()
    const start = shard * this.shardBytes + offset
    return this.bytes.slice(start, start + length)
  }

  async writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    this.bytes.set(bytes, shard * this.shardBytes + offset)
  }

  async orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    addCounters(this.bytes, shard * this.shardBytes + offset, bytes)
  }

  async clear(): Promise<void> {
    this.checkOpen()
    this.bytes.fill(0)
  }

  async close(): Promise<void> {
    this.closed = true
  }

  private run(batch: PositionBatch, out: Uint8Array, mode: 'increment' | 'decrement' | 'test'): void {
    this.checkOpen()
    counterBatch(this.bytes, this.shardBytes, batch, out, mode)
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
