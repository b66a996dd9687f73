import type { FilterParametersInput } from '@bloomkit/core'
import { orInto, popcount, SET_BITS, TEST_BITS, testOrSetBatch, type BitStore, type BitStoreCapabilities, type PositionBatch } from '@bloomkit/core/store'
import { ShardBytesStore } from './shard-bytes-store.js'

/** Filters of at least this many bytes keep their bits in a WebAssembly.Memory (see {@link newBits}). */
const ALIGNED_MIN_BYTES = 1 << 20

/**
 * Zeroed bytes for a filter. A large one lives in a WebAssembly.Memory, whose buffer starts on a
 * 64 KiB boundary, so that each 64-byte block is one cache line: Node's malloc'd ArrayBuffers start
 * 16 bytes into a line (after a free, anywhere on a 16-byte step; JS cannot see the address), and a
 * straddling block costs two misses. Memory comes in 64 KiB pages, hence large filters only; where
 * WebAssembly is missing (`node --jitless`) or refuses the size, a plain Uint8Array.
 */
function newBits(length: number): Uint8Array {
  if (length >= ALIGNED_MIN_BYTES) {
    try {
      return new Uint8Array(new WebAssembly.Memory({ initial: Math.ceil(length / 65536) }).buffer, 0, length)
    } catch {
      // fall through to a plain array
    }
  }
  return new Uint8Array(length)
}

/**
 * Bits in one `Uint8Array`, shard after shard, each in Redis SETBIT order: the snapshot payload
 * as-is. Synchronous, no Node-only API, so it runs in browsers, workers, Deno and Bun.
 */
export class MemoryBitStore extends ShardBytesStore implements BitStore<true> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: true } = { sync: true, persistent: false, shared: false }
  /**
   * The bits; `shardBytes` per shard. A filter of 1 MiB or more made here keeps them in a
   * WebAssembly.Memory's buffer (cache-line aligned), which cannot be transferred: post a copy.
   */
  declare readonly bytes: Uint8Array

  /**
   * @param bytes Existing bits to adopt (not copied); zeroed bits of the right size by default.
   */
  constructor(input: FilterParametersInput, bytes?: Uint8Array) {
    super(input, 1, 'bits', newBits, bytes)
  }

  setBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    testOrSetBatch(this.bytes, this.shardBytes, batch, out, SET_BITS)
  }

  testBits(batch: PositionBatch, out: Uint8Array): void {
    this.checkOpen()
    testOrSetBatch(this.bytes, this.shardBytes, batch, out, TEST_BITS)
  }

  countBits(): number[] {
    this.checkOpen()
    const counts: number[] = []
    for (let shard = 0, at = 0; shard < this.parameters.shards; shard++, at += this.shardBytes) counts.push(popcount(this.bytes, at, at + this.shardBytes))
    return counts
  }

  orShard(shard: number, offset: number, bytes: Uint8Array): void {
    this.checkOpen()
    orInto(this.bytes, shard * this.shardBytes + offset, bytes)
  }
}
