import { BloomError, type FilterParameters } from '@bloomkit/core'
import type { BitStore, BitStoreCapabilities, PositionBatch } from '@bloomkit/core/store'
import { sendBitfield } from './bitfield-command.js'
import { COALESCE_MAX_KEYS, Coalescer } from './coalesce.js'
import { dataLost } from './errors.js'
import { IO_CHUNK_BYTES, type Generation, type ShardGenerations } from './generations.js'
import type { RedisStoreOptions } from './options.js'
import { COUNT_SHARD, OR_SHARD, READ_SHARD, WRITE_SHARD } from './scripts.js'
import { MAX_SCAN_BYTES, orWhole, readWhole } from './whole-shard.js'

/** Bytes per orShard script call; the OR loop runs in Lua, so it is kept short to bound the blocking. */
const OR_CHUNK_BYTES = 1 << 16

/**
 * The bits of a named filter in Redis (see {@link ShardGenerations} for the keys and markers).
 *
 * `setBits`/`testBits` send, per shard, one whole-shard read or OR when the batch has enough keys
 * there, else one `BITFIELD`/`BITFIELD_RO` per chunk of keys, all in flight at once; each begins
 * by reading the marker, so a missing shard is noticed by the same atomic command that would
 * otherwise have answered "absent", and raises `BLOOM_DATA_LOST`. Calls of a few keys made in the
 * same tick share their round trip.
 *
 * Made by `RedisBloomFilter`, which owns the parameters in Redis.
 */
export class RedisBitStore implements BitStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: true }
  readonly parameters: FilterParameters
  private readonly shards: ShardGenerations
  private readonly generation: Generation
  private readonly options: RedisStoreOptions
  private readonly keysPerCommand: number
  /** The fewest keys of a batch in one shard for which it reads or ORs the whole shard. */
  private readonly scanMinKeys: number
  private readonly coalesced: { set: Coalescer; test: Coalescer }
  private closed = false

  /** @param generation 'next' for the store a rebuild fills. */
  constructor(shards: ShardGenerations, options: RedisStoreOptions = {}, generation: Generation = 'live') {
    this.shards = shards
    this.parameters = shards.parameters
    this.options = options
    this.generation = generation
    this.keysPerCommand = options.keysPerCommand ?? 512
    const scanBytesPerKey = options.scanBytesPerKey ?? 512
    this.scanMinKeys = scanBytesPerKey === 0 || shards.shardBytes + 4 > MAX_SCAN_BYTES ? Infinity : Math.ceil(shards.shardBytes / scanBytesPerKey)
    this.coalesced = { set: new Coalescer((batch, out) => this.run(true, batch, out)), test: new Coalescer((batch, out) => this.run(false, batch, out)) }
  }

  /** The store that writes the next generation's keys, as a rebuild does. */
  nextGeneration(): RedisBitStore {
    return new RedisBitStore(this.shards, this.options, 'next')
  }

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.submit(true, batch, out)
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.submit(false, batch, out)
  }

  async countBits(): Promise<number[]> {
    this.checkOpen()
    const counts = new Array<number>(this.parameters.shards).fill(0)
    await this.shards.forEachShard(async (shard) => {
      counts[shard] = Number(await this.shardScript(COUNT_SHARD, shard, [this.shards.shardBytes - 1], 'countBits'))
    })
    return counts
  }

  async readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    this.checkOpen()
    const out = new Uint8Array(length)
    for (let at = 0; at < length; at += IO_CHUNK_BYTES) {
      const end = Math.min(length, at + IO_CHUNK_BYTES)
      const bytes = (await this.shardScript(READ_SHARD, shard, [offset + at, offset + end - 1], 'readShard', true)) as Buffer
      if (bytes.length !== end - at) throw dataLost(`readShard ${this.shards.key(shard, this.generation)}`)
      out.set(bytes, at)
    }
    return out
  }

  async writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    for (let at = 0; at < bytes.length; at += IO_CHUNK_BYTES) {
      const piece = bytes.subarray(at, Math.min(bytes.length, at + IO_CHUNK_BYTES))
      await this.shardScript(WRITE_SHARD, shard, [offset + at, Buffer.from(piece.buffer, piece.byteOffset, piece.length)], 'writeShard')
    }
  }

  async orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    for (let at = 0; at < bytes.length; at += OR_CHUNK_BYTES) {
      const piece = bytes.subarray(at, Math.min(bytes.length, at + OR_CHUNK_BYTES))
      await this.shardScript(OR_SHARD, shard, [offset + at, Buffer.from(piece.buffer, piece.byteOffset, piece.length)], 'orShard')
    }
  }

  /**
   * Unsets every bit: each shard is rebuilt empty as its next generation (in bounded steps) and
   * swapped in with one RENAME, so a reader sees the old shard or the empty one, never a half.
   */
  async clear(): Promise<void> {
    this.checkOpen()
    await this.shards.forEachShard(async (shard) => {
      await this.shards.allocateNext(shard)
      await this.shards.sealNext(shard)
      await this.shards.swapNext(shard, 0)
    })
  }

  async close(): Promise<void> {
    // The client is the user's: closing a filter leaves the connection to its owner.
    this.closed = true
  }

  private submit(set: boolean, batch: PositionBatch, out: Uint8Array): Promise<void> {
    try {
      this.checkOpen()
    } catch (error) {
      return Promise.reject(error)
    }
    if (batch.size > COALESCE_MAX_KEYS) return this.run(set, batch, out)
    return (set ? this.coalesced.set : this.coalesced.test).submit(batch, out)
  }

  /**
   * Per shard, one whole-shard read or OR if the batch has enough keys there, else one BITFIELD
   * per chunk of `keysPerCommand` keys; all in flight together.
   */
  private async run(set: boolean, batch: PositionBatch, out: Uint8Array): Promise<void> {
    const commands: Promise<void>[] = []
    const { shards, generation } = this
    for (const { shard, keys } of batch.groupByShard()) {
      if (keys.length >= this.scanMinKeys) {
        commands.push(set ? orWhole(shards, generation, shard, batch, keys, out) : readWhole(shards, generation, shard, batch, keys, out))
        continue
      }
      for (let from = 0; from < keys.length; from += this.keysPerCommand) {
        commands.push(sendBitfield(shards, generation, set, shard, batch, keys, from, Math.min(keys.length, from + this.keysPerCommand), out, set))
      }
    }
    await Promise.all(commands)
  }

  private shardScript(script: string, shard: number, args: Array<number | Buffer>, what: string, buffer = false): Promise<unknown> {
    const { client, shardBytes, markerPlain } = this.shards
    const key = this.shards.key(shard, this.generation)
    const all = [shardBytes, markerPlain, this.shards.otherMarker(this.generation), ...args]
    const promise = buffer ? client.callBuffer('eval', script, 1, key, ...all) : client.eval(script, 1, key, ...all)
    return this.shards.call(promise, `${what} on ${key}`)
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
