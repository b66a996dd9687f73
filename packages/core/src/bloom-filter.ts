import type { BitStore, Outcome } from './bit-store.js'
import { BloomError } from './errors.js'
import type { BloomKey, KeyHasher } from './key-hasher.js'
import { assertSameParameters, shardBitsOf, shardBytesOf, type FilterParameters } from './parameters.js'
import { PositionBatch } from './position-batch.js'
import { positionsOf, shardOf } from './positions.js'
import { encodeSnapshotHeader, snapshotBytes } from './snapshot.js'
import { estimateErrorRate } from './sizing.js'
import { crc32 } from './crc32.js'

/** Keys hashed per call to the store by `addMany`/`hasMany`. */
const BATCH_KEYS = 16_384
/** Bytes read per call to the store by export and merge. */
const CHUNK_BYTES = 1 << 20

/**
 * A Bloom filter over any {@link BitStore}: core hashes and validates, the store holds the bits.
 * Over a synchronous store (the memory backend) every method returns plain values and allocates
 * nothing per key; over an asynchronous one they return Promises and talk to the store once per batch.
 *
 * Backends subclass this with their own `create`/`open`/`import`.
 */
export class BloomFilter<Sync extends boolean = boolean> {
  /** Everything that decides where keys go; identical parameters make filters mergeable. */
  readonly parameters: FilterParameters
  protected readonly store: BitStore<Sync>
  protected readonly hasher: KeyHasher
  private readonly sync: boolean
  protected readonly shardBits: number
  private readonly fillPositions: ReturnType<typeof positionsOf>
  private readonly single: PositionBatch
  private readonly singleOut = new Uint8Array(1)
  private syncBatch: PositionBatch | undefined
  private closed = false

  /**
   * @param store Holds the bits; its `parameters` are the filter's.
   * @param hasher Hashes keys with the parameters' seed (from `createKeyHasher(parameters.seed)`).
   */
  constructor(store: BitStore<Sync>, hasher: KeyHasher) {
    if (hasher.seedA !== store.parameters.seed) {
      throw new BloomError('BLOOM_INCOMPATIBLE', `hasher seed ${hasher.seedA} differs from the store's seed ${store.parameters.seed}`)
    }
    this.store = store
    this.hasher = hasher
    this.parameters = store.parameters
    this.sync = store.capabilities.sync
    this.shardBits = shardBitsOf(store.parameters)
    this.fillPositions = positionsOf(store.parameters.layout)
    this.single = new PositionBatch(1, store.parameters.hashes)
  }

  /** Whether methods return plain values (true) or Promises. */
  get isSync(): Sync {
    return this.sync as Sync
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed
  }

  /**
   * Adds a key. Resolves to true if it was new (at least one of its bits was unset), false if it
   * was already there or is a false positive.
   * @throws BloomError `BLOOM_INVALID_KEY`, `BLOOM_CLOSED`, or the store's error.
   */
  add(key: BloomKey): Outcome<Sync, boolean> {
    return this.one(key, true)
  }

  /**
   * Whether the key may be in the filter: false means definitely not added; true means added or,
   * with probability about {@link errorRate}, a false positive.
   */
  has(key: BloomKey): Outcome<Sync, boolean> {
    return this.one(key, false)
  }

  /** Adds keys in one batch per store round trip; results (new or not) are in input order. */
  addMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.many(keys, true)
  }

  /** Checks keys in one batch per store round trip; results are in input order. */
  hasMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.many(keys, false)
  }

  /**
   * Estimates the distinct keys added, from the set bits of each shard
   * (n ≈ −(m/k)·ln(1 − X/m), as Guava's approximateElementCount and RedisBloom's BF.CARD).
   */
  estimateCount(): Outcome<Sync, number> {
    return this.guard(() => this.after(this.store.countBits(), (counts) => this.countFromBits(counts)))
  }

  /**
   * The false-positive probability of a `has` now, at the current fill: for a classic filter the
   * mean over shards of fill^k; for a blocked one the model's rate at the estimated count.
   */
  errorRate(): Outcome<Sync, number> {
    return this.guard(() =>
      this.after(this.store.countBits(), (counts) => {
        if (this.parameters.layout === 'blocked') {
          const { bits, hashes } = this.parameters
          return estimateErrorRate({ bits, hashes, items: this.countFromBits(counts), layout: 'blocked' })
        }
        let total = 0
        for (let s = 0; s < counts.length; s++) total += Math.pow(counts[s] / this.shardBits, this.parameters.hashes)
        return total / counts.length
      }),
    )
  }

  /** Unsets every bit. */
  clear(): Outcome<Sync, void> {
    return this.guard(() => this.store.clear())
  }

  /**
   * ORs another filter's bits into this one, so this one holds the keys of both.
   * @throws BloomError `BLOOM_INCOMPATIBLE` unless both have identical parameters.
   */
  merge<OtherSync extends boolean>(other: BloomFilter<OtherSync>): Outcome<Sync extends true ? OtherSync : false, void> {
    type R = Outcome<Sync extends true ? OtherSync : false, void>
    const run = () => {
      if (!(other instanceof BloomFilter)) throw new TypeError('merge: other must be a BloomFilter')
      if (other.closed) throw new BloomError('BLOOM_CLOSED', 'merge: the other filter is closed')
      if (other === (this as unknown)) return undefined
      assertSameParameters(this.parameters, other.parameters, 'merge: the other filter')
      const chunks = this.chunkPlan()
      if (this.sync && other.sync) {
        for (const { shard, offset, length } of chunks) {
          this.store.orShard(shard, offset, other.store.readShard(shard, offset, length) as Uint8Array)
        }
        return undefined
      }
      return (async () => {
        for (const { shard, offset, length } of chunks) {
          await this.store.orShard(shard, offset, await other.store.readShard(shard, offset, length))
        }
      })()
    }
    if (this.sync && other.sync) return this.guard(run) as R
    try {
      return Promise.resolve(this.guard(run)) as R
    } catch (error) {
      return Promise.reject(error) as R
    }
  }

  /**
   * The portable snapshot (docs/SPEC.md): a header, the bits in Redis SETBIT order, a CRC-32.
   * Holds the whole filter in memory; for large filters use {@link exportChunks}.
   */
  export(): Outcome<Sync, Uint8Array> {
    return this.guard(() => {
      if (this.sync) {
        const out = new Uint8Array(snapshotBytes(this.parameters))
        let at = 0
        for (const piece of this.snapshotPiecesSync()) {
          out.set(piece, at)
          at += piece.length
        }
        return out as Outcome<Sync, Uint8Array>
      }
      return (async () => {
        const out = new Uint8Array(snapshotBytes(this.parameters))
        let at = 0
        for await (const piece of this.exportChunks()) {
          out.set(piece, at)
          at += piece.length
        }
        return out
      })() as Outcome<Sync, Uint8Array>
    })
  }

  /** The snapshot as a stream of chunks of at most 1 MiB of bits, so any size exports in bounded memory. */
  async *exportChunks(): AsyncIterableIterator<Uint8Array> {
    this.checkOpen()
    const header = encodeSnapshotHeader({ parameters: this.parameters, items: await this.estimateCount() })
    yield header
    let crc = 0
    for (const { shard, offset, length } of this.chunkPlan()) {
      // A synchronous store may hand out a view of its live bits: copy, so that adds made while the
      // consumer still holds a chunk cannot change it after its checksum was taken.
      const read = await this.store.readShard(shard, offset, length)
      const bytes = this.sync ? read.slice() : read
      crc = crc32(bytes, crc)
      yield bytes
    }
    yield trailer(crc)
  }

  /** Releases the store; idempotent. Later calls fail with `BLOOM_CLOSED`. */
  close(): Outcome<Sync, void> {
    if (this.closed) return (this.sync ? undefined : Promise.resolve()) as Outcome<Sync, void>
    this.closed = true
    return this.store.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  /** Hashes `key` into slot `index` of `batch`. */
  protected locate(key: BloomKey, batch: PositionBatch, index: number): void {
    const hasher = this.hasher
    hasher.hash(key)
    const { shards, hashes } = this.parameters
    batch.shards[index] = shardOf(hasher.a, hasher.b, shards)
    this.fillPositions(hasher.a, hasher.b, this.shardBits, hashes, batch.positions, index * hashes)
  }

  protected checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the filter is closed')
  }

  private one(key: BloomKey, set: boolean): Outcome<Sync, boolean> {
    if (this.sync) {
      // The hot path: a reused batch of one, no Promise, no allocation.
      this.checkOpen()
      this.locate(key, this.single, 0)
      this.single.size = 1
      if (set) this.store.setBits(this.single, this.singleOut)
      else this.store.testBits(this.single, this.singleOut)
      return (this.singleOut[0] === 1) as Outcome<Sync, boolean>
    }
    try {
      this.checkOpen()
      const batch = new PositionBatch(1, this.parameters.hashes)
      this.locate(key, batch, 0)
      batch.size = 1
      const out = new Uint8Array(1)
      const done = (set ? this.store.setBits(batch, out) : this.store.testBits(batch, out)) as Promise<void>
      return done.then(() => out[0] === 1) as Outcome<Sync, boolean>
    } catch (error) {
      return Promise.reject(error) as Outcome<Sync, boolean>
    }
  }

  private many(keys: Iterable<BloomKey>, set: boolean): Outcome<Sync, boolean[]> {
    return this.guard(() => {
      if (keys === null || typeof (keys as Iterable<BloomKey>)?.[Symbol.iterator] !== 'function') {
        throw new TypeError(`keys must be an iterable of strings or Uint8Arrays; got ${keys === null ? 'null' : typeof keys}`)
      }
      if (this.sync) return this.manySync(keys, set) as Outcome<Sync, boolean[]>
      return this.manyAsync(keys, set) as Outcome<Sync, boolean[]>
    })
  }

  private manySync(keys: Iterable<BloomKey>, set: boolean): boolean[] {
    this.syncBatch ??= new PositionBatch(BATCH_KEYS, this.parameters.hashes)
    const batch = this.syncBatch
    const out = new Uint8Array(BATCH_KEYS)
    const results: boolean[] = []
    const flush = () => {
      if (set) this.store.setBits(batch, out)
      else this.store.testBits(batch, out)
      for (let i = 0; i < batch.size; i++) results.push(out[i] === 1)
      batch.size = 0
    }
    batch.size = 0
    for (const key of keys) {
      this.locate(key, batch, batch.size++)
      if (batch.size === BATCH_KEYS) flush()
    }
    if (batch.size > 0) flush()
    return results
  }

  /** Keeps two batches in flight: the store works on one while the next one is hashed. */
  private async manyAsync(keys: Iterable<BloomKey>, set: boolean): Promise<boolean[]> {
    const results: boolean[] = []
    let pending: { done: Promise<void>; out: Uint8Array; size: number } | undefined
    const settle = async () => {
      if (pending === undefined) return
      const { done, out, size } = pending
      pending = undefined
      await done
      for (let i = 0; i < size; i++) results.push(out[i] === 1)
    }
    let batch = new PositionBatch(BATCH_KEYS, this.parameters.hashes)
    const send = async () => {
      const out = new Uint8Array(batch.size)
      const done = (set ? this.store.setBits(batch, out) : this.store.testBits(batch, out)) as Promise<void>
      // Observed now so that a rejection while the previous batch is awaited is not "unhandled".
      done.catch(() => {})
      const previous = settle()
      pending = { done, out, size: batch.size }
      await previous
      batch = new PositionBatch(BATCH_KEYS, this.parameters.hashes)
    }
    try {
      for (const key of keys) {
        this.locate(key, batch, batch.size++)
        if (batch.size === BATCH_KEYS) await send()
      }
      if (batch.size > 0) await send()
      await settle()
    } finally {
      pending?.done.catch(() => {})
    }
    return results
  }

  private countFromBits(counts: ArrayLike<number>): number {
    const m = this.shardBits
    const k = this.parameters.hashes
    let total = 0
    for (let s = 0; s < counts.length; s++) {
      // A full shard would give infinity; half a bit short of full keeps the estimate finite.
      const set = Math.min(counts[s], m - 0.5)
      total += (-m / k) * Math.log1p(-set / m)
    }
    return Math.round(total)
  }

  private *chunkPlan(): Generator<{ shard: number; offset: number; length: number }> {
    const shardBytes = shardBytesOf(this.parameters)
    for (let shard = 0; shard < this.parameters.shards; shard++) {
      for (let offset = 0; offset < shardBytes; offset += CHUNK_BYTES) {
        yield { shard, offset, length: Math.min(CHUNK_BYTES, shardBytes - offset) }
      }
    }
  }

  private *snapshotPiecesSync(): Generator<Uint8Array> {
    const items = this.countFromBits(this.store.countBits() as ArrayLike<number>)
    yield encodeSnapshotHeader({ parameters: this.parameters, items })
    let crc = 0
    for (const { shard, offset, length } of this.chunkPlan()) {
      const bytes = this.store.readShard(shard, offset, length) as Uint8Array
      crc = crc32(bytes, crc)
      yield bytes
    }
    yield trailer(crc)
  }

  /** Runs `body`, turning a synchronous throw into a rejection for an asynchronous filter. */
  private guard<T>(body: () => T): T {
    if (this.sync) {
      this.checkOpen()
      return body()
    }
    try {
      this.checkOpen()
      return body()
    } catch (error) {
      return Promise.reject(error) as T
    }
  }

  /** The one place where a store's result, plain or Promise, is carried on. */
  private after<T, R>(result: T | Promise<T>, next: (value: T) => R): Outcome<Sync, R> {
    if (this.sync) return next(result as T) as Outcome<Sync, R>
    return (result as Promise<T>).then(next) as Outcome<Sync, R>
  }
}

function trailer(crc: number): Uint8Array {
  const bytes = new Uint8Array(4)
  new DataView(bytes.buffer).setUint32(0, crc, true)
  return bytes
}

