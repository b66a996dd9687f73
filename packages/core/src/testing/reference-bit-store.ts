import type { BitStore, BitStoreCapabilities } from '../bit-store.js'
import { BloomError } from '../errors.js'
import { checkParameters, shardBytesOf, type FilterParameters, type FilterParametersInput } from '../parameters.js'
import type { PositionBatch } from '../bits/position-batch.js'

/**
 * The simplest correct store: a Set of bit numbers per shard, asynchronous like a remote store.
 * Slow, and obviously right: the model other stores are checked against.
 */
export class ReferenceBitStore implements BitStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: false, shared: false }
  readonly parameters: FilterParameters
  private readonly shards: Set<number>[]
  private closed = false

  constructor(parameters: FilterParametersInput) {
    this.parameters = checkParameters(parameters)
    this.shards = Array.from({ length: parameters.shards }, () => new Set<number>())
  }

  async setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    this.checkOpen()
    for (let i = 0; i < batch.size; i++) {
      const bits = this.shards[batch.shards[i]]
      let added = false
      for (let j = 0; j < batch.hashes; j++) {
        const position = batch.positions[i * batch.hashes + j]
        if (!bits.has(position)) {
          bits.add(position)
          added = true
        }
      }
      out[i] = added ? 1 : 0
    }
  }

  async testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    this.checkOpen()
    for (let i = 0; i < batch.size; i++) {
      const bits = this.shards[batch.shards[i]]
      let all = true
      for (let j = 0; j < batch.hashes; j++) all &&= bits.has(batch.positions[i * batch.hashes + j])
      out[i] = all ? 1 : 0
    }
  }

  async countBits(): Promise<number[]> {
    this.checkOpen()
    return this.shards.map((bits) => bits.size)
  }

  async readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    this.checkOpen()
    const bytes = new Uint8Array(length)
    for (const position of this.shards[shard]) {
      const byte = Math.floor(position / 8) - offset
      if (byte >= 0 && byte < length) bytes[byte] |= 0x80 >>> position % 8
    }
    return bytes
  }

  async writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    const bits = this.shards[shard]
    for (let i = 0; i < bytes.length * 8; i++) bits.delete((offset + Math.floor(i / 8)) * 8 + (i % 8))
    await this.orShard(shard, offset, bytes)
  }

  async orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    if (offset + bytes.length > shardBytesOf(this.parameters)) throw new RangeError('write past the end of the shard')
    const bits = this.shards[shard]
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) if (bytes[i] & (0x80 >>> bit)) bits.add((offset + i) * 8 + bit)
    }
  }

  async clear(): Promise<void> {
    this.checkOpen()
    for (const bits of this.shards) bits.clear()
  }

  async close(): Promise<void> {
    this.closed = true
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
