import {
  BloomError,
  PositionBatch,
  shardBitsOf,
  shardBytesOf,
  type BitStore,
  type BitStoreCapabilities,
  type FilterParameters,
} from '@bloomkit/core'
import type { Cluster, Command, Redis } from 'ioredis'
import { bitfieldCommand } from './bitfield-command.js'
import type { KeyLayout } from './key-layout.js'
import { dataLost, storeError, withTimeout } from './redis-errors.js'
import { COUNT_SHARD, DISCARD_UNMARKED, OR_SCRATCH, OR_SHARD, READ_SHARD, SET_MARKER, SWAP_SHARD, WRITE_SHARD } from './scripts.js'
import { addKeys, markerOf, setKeys, testKeys } from './shard-scan.js'

/** A connected ioredis client: standalone (`Redis`) or `Cluster`, with the user's own options. */
export type RedisClient = Redis | Cluster

/** Tuning of a {@link RedisBitStore}; every field has a measured default. */
export interface RedisStoreOptions {
  /**
   * Milliseconds a call waits for Redis before it rejects with `BLOOM_STORE_UNAVAILABLE`, from 1
   * to 2^31 − 1, or `Infinity` to rely on the client's own timeouts. Applies per command (a batch
   * sends several). Default: 5000.
   */
  readonly timeout?: number
  /** Keys per BITFIELD command, from 1 to 65 536. Default: 512 (measured best of 256–4096 on loopback). */
  readonly keysPerCommand?: number
  /**
   * When a batch puts many keys into one shard, reading or ORing the whole shard costs less than
   * a BITFIELD operation per bit: a batch does so for a shard of at most 4 MiB that holds at
   * least one of its keys per `scanBytesPerKey` bytes. From 0 (always BITFIELD) to 2^31 − 1.
   * Default: 512, where a whole-shard read or OR moves at most ~2× (read) or ~4× (OR) the bytes
   * the BITFIELD commands would, and was measured ~4× (OR) to ~15× (read) cheaper in CPU.
   */
  readonly scanBytesPerKey?: number
}

/** Which generation of shard keys a store reads and writes. */
type Generation = 'live' | 'next'

/** Bytes per SETRANGE/GETRANGE when writing or reading a shard's bits. */
export const IO_CHUNK_BYTES = 1 << 20
/**
 * The most bytes one command allocates: 4 MiB, zero-filled in ~3 ms here (page faults included),
 * under Redis's default slow-log threshold of 10 ms. A default shard (≤ 4 MiB with its marker) is allocated by one SETRANGE at its
 * last byte, which Redis sizes exactly; a larger shard grows in 4 MiB steps, and Redis's greedy
 * growth then leaves up to 1 MiB unused at its end.
 */
export const ALLOC_STEP_BYTES = 4 << 20
/** The largest shard (bits and marker) a batch reads or ORs whole: no command moves more than 4 MiB. */
const MAX_SCAN_BYTES = 4 << 20
/** Milliseconds a batch's scratch key lives should its transaction fail halfway (it is deleted at once otherwise). */
const SCRATCH_TTL_MS = 60_000
/** Bytes per orShard script call; the OR loop runs in Lua, so it is kept short to bound the blocking. */
const OR_CHUNK_BYTES = 1 << 16
/** Batches this small (single add/has calls) wait for the current tick to end and travel together. */
const COALESCE_MAX_KEYS = 64
/** Shards worked on at once by whole-filter operations (allocate, count, swap). */
const SHARD_CONCURRENCY = 16

interface Pending {
  batch: PositionBatch
  requests: Array<{ out: Uint8Array; at: number; size: number; resolve: () => void; reject: (error: unknown) => void }>
}

/** Runs `work(i)` for i in [0, count) with at most `limit` running at once. */
export async function forEachLimited(count: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await work(next++)
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
}

function markerBytes(value: number): Buffer {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(value >>> 0)
  return bytes
}

/**
 * The bits of a named filter in Redis: one string key per shard, holding the shard's bits in
 * SETBIT order followed by a 4-byte marker (the filter's epoch × 2, + 1 while a rebuild wants
 * writes copied to the next generation).
 *
 * `setBits`/`testBits` send one `BITFIELD`/`BITFIELD_RO` per shard and chunk of keys, all in
 * flight at once; each begins by reading the marker, so a missing shard is noticed by the same
 * atomic command that would otherwise have answered "absent", and raises `BLOOM_DATA_LOST`.
 * Calls of a few keys made in the same tick share their round trip.
 *
 * Made by `RedisBloomFilter` (or `createRedisBitStore`), which owns the parameters in Redis.
 */
export class RedisBitStore implements BitStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: true }
  readonly parameters: FilterParameters
  /** Where the keys are. */
  readonly layout: KeyLayout
  /** The random number that marks this filter's shard keys; changes when the name is re-created. */
  readonly epoch: number
  /** The user's ioredis client; the store never closes it. */
  readonly client: RedisClient
  private readonly prefix: string
  private readonly generation: Generation
  /** Milliseconds each command may take; see {@link RedisStoreOptions.timeout}. */
  readonly timeout: number
  private readonly keysPerCommand: number
  private readonly scanBytesPerKey: number
  /** The fewest keys of a batch in one shard for which it reads or ORs the whole shard. */
  private readonly scanMinKeys: number
  private readonly shardBits: number
  private readonly shardBytes: number
  private readonly marker: number
  private readonly markerPlain: Buffer
  private readonly markerFlagged: Buffer
  private readonly queues: { set: Pending | undefined; test: Pending | undefined } = { set: undefined, test: undefined }
  private closed = false

  /**
   * @param epoch The filter's epoch from its meta hash, 1 to 2^31 − 1.
   * @param generation 'next' for the store a rebuild fills (internal).
   */
  constructor(client: RedisClient, layout: KeyLayout, parameters: FilterParameters, epoch: number, options: RedisStoreOptions = {}, generation: Generation = 'live') {
    this.client = client
    this.prefix = (client.options as { keyPrefix?: string }).keyPrefix ?? ''
    this.layout = layout
    this.parameters = parameters
    this.epoch = epoch
    this.generation = generation
    this.timeout = options.timeout ?? 5000
    this.keysPerCommand = options.keysPerCommand ?? 512
    this.scanBytesPerKey = options.scanBytesPerKey ?? 512
    this.shardBits = shardBitsOf(parameters)
    this.shardBytes = shardBytesOf(parameters)
    this.scanMinKeys = this.scanBytesPerKey === 0 || this.shardBytes + 4 > MAX_SCAN_BYTES ? Infinity : Math.ceil(this.shardBytes / this.scanBytesPerKey)
    this.marker = epoch * 2
    this.markerPlain = markerBytes(this.marker)
    this.markerFlagged = markerBytes(this.marker + 1)
  }

  /** The store that writes the next generation's keys, as a rebuild does. */
  nextGeneration(): RedisBitStore {
    return new RedisBitStore(this.client, this.layout, this.parameters, this.epoch, { timeout: this.timeout, keysPerCommand: this.keysPerCommand, scanBytesPerKey: this.scanBytesPerKey }, 'next')
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
    await forEachLimited(this.parameters.shards, SHARD_CONCURRENCY, async (shard) => {
      counts[shard] = Number(await this.shardScript(COUNT_SHARD, shard, [this.shardBytes - 1], 'countBits'))
    })
    return counts
  }

  async readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    this.checkOpen()
    const out = new Uint8Array(length)
    for (let at = 0; at < length; at += IO_CHUNK_BYTES) {
      const end = Math.min(length, at + IO_CHUNK_BYTES)
      const bytes = (await this.shardScript(READ_SHARD, shard, [offset + at, offset + end - 1], 'readShard', true)) as Buffer
      if (bytes.length !== end - at) throw dataLost(`readShard ${this.key(shard)}`)
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
    await forEachLimited(this.parameters.shards, SHARD_CONCURRENCY, async (shard) => {
      await this.allocateNext(shard)
      await this.sealNext(shard)
      await this.swapNext(shard, 0)
    })
  }

  async close(): Promise<void> {
    // The client is the user's: closing a filter leaves the connection to its owner.
    this.closed = true
  }

  // ---- Shard lifecycle, used by RedisBloomFilter for create, import, rebuild and clear ----

  /**
   * Makes the next-generation key of `shard` a zeroed string of the shard's size plus its (still
   * zero) marker, allocating at most {@link ALLOC_STEP_BYTES} per command: a 1-byte SETRANGE past
   * the end, which Redis zero-fills, so only one byte travels and even a 512 MiB shard never
   * blocks Redis for long.
   */
  async allocateNext(shard: number): Promise<void> {
    const key = this.layout.nextShard(shard)
    const total = this.shardBytes + 4
    await this.call(this.client.del(key), `allocate ${key}`)
    for (let end = Math.min(total, ALLOC_STEP_BYTES); ; end = Math.min(total, end + ALLOC_STEP_BYTES)) {
      await this.call(this.client.setrange(key, end - 1, '\0'), `allocate ${key}`)
      if (end === total) break
    }
  }

  /** Writes bytes of the (allocated) next generation's shard in place; no marker check: nobody reads it yet. */
  async writeNext(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    const key = this.layout.nextShard(shard)
    for (let at = 0; at < bytes.length; at += IO_CHUNK_BYTES) {
      const piece = bytes.subarray(at, Math.min(bytes.length, at + IO_CHUNK_BYTES))
      await this.call(this.client.setrange(key, offset + at, Buffer.from(piece.buffer, piece.byteOffset, piece.length)), `write ${key}`)
    }
  }

  /** Writes the marker after the next generation's bits: from now on the key counts as complete. */
  async sealNext(shard: number): Promise<void> {
    const key = this.layout.nextShard(shard)
    await this.call(this.client.setrange(key, this.shardBytes, this.markerPlain), `seal ${key}`)
  }

  /**
   * Atomically replaces the live shard by the sealed next generation (one script: check, RENAME,
   * keep the TTL). `ttlMs` is used when the live key has none left (it was lost); 0 for none.
   */
  async swapNext(shard: number, ttlMs: number): Promise<void> {
    const next = this.layout.nextShard(shard)
    const live = this.layout.shard(shard)
    await this.call(this.client.eval(SWAP_SHARD, 2, next, live, this.shardBytes, this.markerPlain, Math.max(0, Math.round(ttlMs))), `swap ${live}`)
  }

  /**
   * Flags (or unflags) the live shard's marker: while flagged, every add is also written to the
   * next generation, so a rebuild loses no key added while it runs. Returns false if the live
   * key is lost (a rebuild then simply replaces it).
   */
  async flagLive(shard: number, on: boolean): Promise<boolean> {
    const key = this.layout.shard(shard)
    const result = await this.call(
      this.client.eval(SET_MARKER, 1, key, this.shardBytes, this.markerPlain, this.markerFlagged, on ? this.markerFlagged : this.markerPlain),
      `flag ${key}`,
    )
    return Number(result) === 1
  }

  /** Deletes the next-generation key of `shard` (an abandoned rebuild or import). */
  async dropNext(shard: number): Promise<void> {
    await this.call(this.client.del(this.layout.nextShard(shard)), 'drop next generation')
  }

  /** Sets a TTL in ms (0: none) on the live key of `shard`. */
  async expireLive(shard: number, ttlMs: number): Promise<void> {
    const key = this.layout.shard(shard)
    await this.call(ttlMs > 0 ? this.client.pexpire(key, ttlMs) : this.client.persist(key), `expire ${key}`)
  }

  /** Runs `promise` under the store's timeout, mapping errors to coded BloomErrors. */
  call<T>(promise: Promise<T>, what: string): Promise<T> {
    return withTimeout(promise, this.timeout, what).catch((error: unknown) => {
      throw storeError(error, what)
    })
  }

  // ---- The hot path ----

  private submit(set: boolean, batch: PositionBatch, out: Uint8Array): Promise<void> {
    try {
      this.checkOpen()
    } catch (error) {
      return Promise.reject(error)
    }
    if (batch.size > COALESCE_MAX_KEYS) return this.run(set, batch, out)
    return this.enqueue(set, batch, out)
  }

  /** Queues a small batch; everything queued in this tick is sent as one batch at its end. */
  private enqueue(set: boolean, batch: PositionBatch, out: Uint8Array): Promise<void> {
    const which = set ? 'set' : 'test'
    let pending = this.queues[which]
    if (pending === undefined) {
      pending = { batch: new PositionBatch(COALESCE_MAX_KEYS, batch.hashes), requests: [] }
      this.queues[which] = pending
      queueMicrotask(() => this.flush(set))
    }
    let target = pending.batch
    const at = target.size
    if (at + batch.size > target.shards.length) {
      const grown = new PositionBatch(Math.max(2 * target.shards.length, at + batch.size), batch.hashes)
      grown.shards.set(target.shards.subarray(0, at))
      grown.positions.set(target.positions.subarray(0, at * batch.hashes))
      grown.size = at
      pending.batch = target = grown
    }
    target.shards.set(batch.shards.subarray(0, batch.size), at)
    target.positions.set(batch.positions.subarray(0, batch.size * batch.hashes), at * batch.hashes)
    target.size = at + batch.size
    return new Promise((resolve, reject) => pending.requests.push({ out, at, size: batch.size, resolve, reject }))
  }

  private flush(set: boolean): void {
    const which = set ? 'set' : 'test'
    const pending = this.queues[which]!
    this.queues[which] = undefined
    const out = new Uint8Array(pending.batch.size)
    this.run(set, pending.batch, out).then(
      () => {
        for (const request of pending.requests) {
          request.out.set(out.subarray(request.at, request.at + request.size))
          request.resolve()
        }
      },
      (error: unknown) => {
        for (const request of pending.requests) request.reject(error)
      },
    )
  }

  /**
   * Per shard, one whole-shard read or OR if the batch has enough keys there, else one BITFIELD
   * per chunk of `keysPerCommand` keys; all in flight together.
   */
  private async run(set: boolean, batch: PositionBatch, out: Uint8Array): Promise<void> {
    const commands: Promise<void>[] = []
    for (const { shard, keys } of batch.groupByShard()) {
      if (keys.length >= this.scanMinKeys) {
        commands.push(set ? this.orWhole(shard, batch, keys, out) : this.readWhole(shard, batch, keys, out))
        continue
      }
      for (let from = 0; from < keys.length; from += this.keysPerCommand) {
        commands.push(this.send(set, shard, batch, keys, from, Math.min(keys.length, from + this.keysPerCommand), out, this.generation, set))
      }
    }
    await Promise.all(commands)
  }

  private async send(
    set: boolean,
    shard: number,
    batch: PositionBatch,
    keys: Uint32Array,
    from: number,
    to: number,
    out: Uint8Array,
    generation: Generation,
    copyIfFlagged: boolean,
  ): Promise<void> {
    const key = generation === 'live' ? this.layout.shard(shard) : this.layout.nextShard(shard)
    const what = `${set ? 'add' : 'has'} on ${key}`
    const command = bitfieldCommand(set, this.prefix + key, this.shardBits, batch.positions, batch.hashes, keys, from, to)
    // Integers, or strings of digits for a client with ioredis's stringNumbers option.
    const reply = (await this.call(this.sendCommand(command), what)) as Array<number | string>
    const marker = Number(reply[0])
    const flagged = marker === this.marker + 1 && generation === 'live'
    if (marker !== this.marker && !flagged) {
      // A write to a lost key just re-created it without a marker: remove that debris so it
      // does not hold memory (or outlive the filter's TTL); the error stands either way.
      if (set) await this.discardUnmarked(key)
      throw dataLost(what)
    }
    const hashes = batch.hashes
    for (let k = from, r = 1; k < to; k++) {
      let result = set ? 0 : 1
      for (let end = r + hashes; r < end; r++) {
        if (Number(reply[r]) === 0) result = set ? 1 : 0
      }
      out[keys[k]] = result
    }
    if (flagged && set && copyIfFlagged) {
      // A rebuild is running: the next generation must get this key too, before we answer.
      const ignored = new Uint8Array(batch.size)
      try {
        await this.send(true, shard, batch, keys, from, to, ignored, 'next', false)
      } catch (error) {
        if (!(error instanceof BloomError && error.code === 'BLOOM_DATA_LOST')) throw error
        // The next generation is gone: swapped in since (so "live" is it now) or abandoned.
        await this.send(true, shard, batch, keys, from, to, ignored, 'live', false)
      }
    }
  }

  /** Tests the keys' bits in a copy of the whole shard: one GETRANGE, which also reads the marker. */
  private async readWhole(shard: number, batch: PositionBatch, keys: Uint32Array, out: Uint8Array): Promise<void> {
    const key = this.key(shard)
    const what = `has on ${key}`
    const bytes = await this.call(this.client.getrangeBuffer(key, 0, this.shardBytes + 3), what)
    if (!this.accepts(markerOf(bytes, this.shardBytes))) throw dataLost(what)
    testKeys(bytes, batch.positions, batch.hashes, keys, 0, keys.length, out)
  }

  /**
   * Adds the keys with one transaction on the shard's slot: SET the batch's bits into the
   * scratch key, GETRANGE the shard (its bits before the batch, and its marker), and OR the
   * scratch key into it (and into the next generation while a rebuild runs). MULTI/EXEC makes the
   * three one atomic step, so the old bits say exactly which keys were new, as BITFIELD's
   * replies would.
   */
  private async orWhole(shard: number, batch: PositionBatch, keys: Uint32Array, out: Uint8Array): Promise<void> {
    const key = this.key(shard)
    const what = `add on ${key}`
    const delta = Buffer.alloc(this.shardBytes)
    setKeys(delta, batch.positions, batch.hashes, keys, 0, keys.length)
    const scratch = this.layout.scratch(shard)
    const next = this.layout.nextShard(shard)
    const accepted = this.generation === 'live' ? this.markerFlagged : this.markerPlain
    const replies = await this.call(
      this.client
        .multi()
        .set(scratch, delta, 'PX', SCRATCH_TTL_MS)
        .getrangeBuffer(key, 0, this.shardBytes + 3)
        .eval(OR_SCRATCH, 3, key, scratch, next, this.shardBytes, this.markerPlain, accepted, this.generation === 'live' ? '1' : '0')
        .exec(),
      what,
    )
    if (replies === null) throw storeError(new Error('transaction aborted'), what)
    for (const [error] of replies) if (error) throw storeError(error, what)
    const bytes = replies[1][1] as Buffer
    if (!this.accepts(markerOf(bytes, this.shardBytes))) throw dataLost(what)
    addKeys(bytes, batch.positions, batch.hashes, keys, 0, keys.length, out)
  }

  /** Whether a shard with this marker is this store's to read and write. */
  private accepts(marker: number): boolean {
    return marker === this.marker || (marker === this.marker + 1 && this.generation === 'live')
  }

  private sendCommand(command: Command): Promise<unknown> {
    this.client.sendCommand(command)
    return command.promise
  }

  private async discardUnmarked(key: string): Promise<void> {
    try {
      await this.call(this.client.eval(DISCARD_UNMARKED, 1, key, this.shardBytes, this.markerPlain, this.markerFlagged), `discard ${key}`)
    } catch {
      // Best effort: the caller is about to raise BLOOM_DATA_LOST, which says what matters.
    }
  }

  private key(shard: number): string {
    return this.generation === 'live' ? this.layout.shard(shard) : this.layout.nextShard(shard)
  }

  private shardScript(script: string, shard: number, args: Array<number | Buffer>, what: string, buffer = false): Promise<unknown> {
    const key = this.key(shard)
    const accepted = this.generation === 'live' ? this.markerFlagged : this.markerPlain
    const all = [this.shardBytes, this.markerPlain, accepted, ...args]
    const promise = buffer ? this.client.callBuffer('eval', script, 1, key, ...all) : this.client.eval(script, 1, key, ...all)
    return this.call(promise, `${what} on ${key}`)
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
