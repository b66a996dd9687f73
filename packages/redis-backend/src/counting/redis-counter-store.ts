import { BloomError, type FilterParameters } from '@bloomkit/core'
import type { BitStoreCapabilities, CounterStore, PositionBatch } from '@bloomkit/core/store'
import { counterBatchArgs } from './counter-batch-args.js'
import { ADD_COUNTERS, COUNT_COUNTERS, COUNTER_BATCH } from './counter-scripts.js'
import { type ShardGenerations, IO_CHUNK_BYTES, readInSteps, writeInSteps } from '../layout/shard-generations.js'
import { READ_SHARD, WRITE_SHARD } from '../bits/bit-scripts.js'

/** Counter bytes one merge or count script reads at once: small, since the script blocks its node meanwhile. */
const SCRIPT_CHUNK_BYTES = 64 * 1024
/**
 * Keys per counting script: at most 4096 × 64 hashes positions, and a script that blocks its node
 * for a few milliseconds at most.
 */
const SCRIPT_CHUNK_KEYS = 4096

/**
 * A counting filter's counters in Redis (docs/SPEC.md, section 9.11): each shard key holds
 * `shardBits / 2` bytes of 4-bit counters (`BITFIELD … u4 #p` order), then the 4-byte marker. A
 * batch is one Lua script per shard key and 4,096 keys, which checks the marker and changes those
 * keys' counters in one atomic step on the node that holds the key: atomic per key against any number of writers,
 * standalone or Cluster.
 */
export class RedisCounterStore implements CounterStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: true }
  readonly parameters: FilterParameters
  readonly counterBits = 4
  private readonly shards: ShardGenerations
  private closed = false

  /** @param shards The filter's shard keys, made with `counterBits` 4. */
  constructor(shards: ShardGenerations) {
    this.shards = shards
    this.parameters = shards.parameters
  }

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('a', batch, out)
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('t', batch, out)
  }

  removeBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.run('r', batch, out)
  }

  async countBits(): Promise<number[]> {
    return (await this.count()).map(([nonZero]) => nonZero)
  }

  async countSaturated(): Promise<number> {
    return (await this.count()).reduce((sum, [, saturated]) => sum + saturated, 0)
  }

  async readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    this.checkOpen()
    await this.shards.verifyMeta('readShard')
    const read = (at: number, end: number) => this.script(READ_SHARD, shard, [this.shards.markerPlain, offset + at, offset + end - 1], 'readShard') as Promise<Buffer>
    return readInSteps(length, read, `readShard ${this.shards.names.shard(shard)}`)
  }

  async writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    await writeInSteps(bytes, IO_CHUNK_BYTES, (at, piece) => this.script(WRITE_SHARD, shard, [this.shards.markerPlain, offset + at, piece], 'writeShard'))
  }

  /** Adds counters (capped at 15), in steps of 64 KiB, each atomic on its node. */
  async orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    await this.shards.verifyMeta('merge')
    await writeInSteps(bytes, SCRIPT_CHUNK_BYTES, (at, piece) => this.script(ADD_COUNTERS, shard, [offset + at, piece], 'merge'))
  }

  async clear(): Promise<void> {
    this.checkOpen()
    await this.shards.renewShards()
  }

  async close(): Promise<void> {
    // The client is the user's: closing a filter leaves the connection to its owner.
    this.closed = true
  }

  /** [non-zero, saturated] per shard. */
  private async count(): Promise<Array<[number, number]>> {
    this.checkOpen()
    await this.shards.verifyMeta('count counters')
    const counts: Array<[number, number]> = Array.from({ length: this.parameters.shards }, () => [0, 0])
    await this.shards.forEachShard(async (shard) => {
      for (let at = 0; at < this.shards.shardBytes; at += SCRIPT_CHUNK_BYTES) {
        const end = Math.min(this.shards.shardBytes, at + SCRIPT_CHUNK_BYTES)
        const [nonZero, saturated] = (await this.script(COUNT_COUNTERS, shard, [at, end - 1], 'count counters')) as [number, number]
        counts[shard][0] += Number(nonZero)
        counts[shard][1] += Number(saturated)
      }
    })
    return counts
  }

  private async run(op: 'a' | 'r' | 't', batch: PositionBatch, out: Uint8Array): Promise<void> {
    this.checkOpen()
    const k = batch.hashes
    const what = op === 'a' ? 'add' : op === 'r' ? 'remove' : 'check'
    // The meta is checked with the batch, so a filter destroyed and re-created under the name is
    // never read as this one (its shards carry another epoch's marker as well).
    const meta = this.shards.verifyMeta(what)
    await Promise.all([
      meta,
      ...batch.groupByShard().map(async ({ shard, keys }) => {
        // A shard's chunks one after another, so that a key repeated in the batch is applied in
        // batch order whatever happens to the connection meanwhile.
        for (let from = 0; from < keys.length; from += SCRIPT_CHUNK_KEYS) {
          const chunk = keys.subarray(from, Math.min(keys.length, from + SCRIPT_CHUNK_KEYS))
          const { runs, offsets, counters } = counterBatchArgs(batch, chunk)
          const reply = (await this.script(COUNTER_BATCH, shard, [op, k, runs, offsets, counters], what)) as Buffer
          if (reply.length !== chunk.length) throw new BloomError('BLOOM_STORE_UNAVAILABLE', `${what}: Redis answered ${reply.length} results for ${chunk.length} keys`)
          for (let i = 0; i < chunk.length; i++) out[chunk[i]] = reply[i] === 0x31 ? 1 : 0
        }
      }),
    ])
  }

  /** A script on shard `shard`'s live key with the marker's offset and value first; bulk replies as Buffers. */
  private script(body: string, shard: number, args: Array<number | string | Buffer>, what: string): Promise<unknown> {
    const { shardBytes, markerPlain } = this.shards
    const key = this.shards.names.shard(shard)
    return this.shards.script(body, [1, key, shardBytes, markerPlain, ...args], `${what} on ${key}`)
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
