import type { FilterParametersInput } from '@bloomkit/core'
import { counterKernels, type BitStoreCapabilities, type CounterStore, type PositionBatch } from '@bloomkit/core/store'
import { ShardBytesStore } from './shard-bytes-store.js'

/**
 * A counting filter's 4-bit counters in one `Uint8Array` (docs/SPEC.md, section 10), shard after
 * shard: exactly `bits / 2` bytes, the counting snapshot's payload as-is. Synchronous; every call
 * runs to its end before another starts, so each key's counters change as one.
 */
export class MemoryCounterStore extends ShardBytesStore implements CounterStore<true> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: true } = { sync: true, persistent: false, shared: false }
  readonly counterBits = 4
  /** The counters: `bits / 2` bytes, 4 bits per position. */
  declare readonly bytes: Uint8Array

  /** @param bytes Existing counters to adopt (not copied); zeroed counters of the right size by default. */
  constructor(input: FilterParametersInput, bytes?: Uint8Array) {
    super(input, 4, 'counters', (length) => new Uint8Array(length), bytes)
  }

  setBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    counterKernels.counterBatch(this.bytes, this.shardBytes, batch, out, 'increment')
  }

  testBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    counterKernels.counterBatch(this.bytes, this.shardBytes, batch, out, 'test')
  }

  removeBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    counterKernels.counterBatch(this.bytes, this.shardBytes, batch, out, 'decrement')
  }

  countBits(): number[] {
    this.checkOpen()
    const counts: number[] = []
    for (let shard = 0, at = 0; shard < this.parameters.shards; shard++, at += this.shardBytes) counts.push(counterKernels.countCounters(this.bytes, at, at + this.shardBytes).nonZero)
    return counts
  }

  countSaturated(): number {
    this.checkOpen()
    return counterKernels.countCounters(this.bytes).saturated
  }

  orShard(shard: number, offset: number, bytes: Uint8Array): void {
    this.checkOpen()
    counterKernels.addCounters(this.bytes, shard * this.shardBytes + offset, bytes)
  }
}
