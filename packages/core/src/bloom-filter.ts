import type { BitStore, Outcome } from './bit-store.js'
import { shardRanges } from './format/chunks.js'
import { BloomError, checkKeys, closedError, invalidParameter, mixedKindsError, noJsonForm } from './errors.js'
import { INSPECT, inspectHidingSeed, type Inspect } from './hidden-seed.js'
import { keyRefusal, type BloomKey, type KeyHasher } from './hashing/key-hasher.js'
import { assertSameParameters, shardBitsOf, type FilterParameters } from './parameters.js'
import { PositionBatch } from './bits/position-batch.js'
import { positionsOf, shardOf } from './bits/positions.js'
import { errorRateFromSetBits, itemsFromSetBits } from './fill.js'
import { exportSnapshot, snapshotChunks } from './format/snapshot-export.js'
import { syncAsync, syncAsyncOfBoth, type SyncAsync } from './sync-async.js'

/** Keys hashed per call to the store by `addMany`/`hasMany`. */
const BATCH_KEYS = 16_384
/** Keys of an array hashed per KeyHasher.hashMany call: a run's pairs are placed before the next run is hashed. */
const HASH_RUN = 1024

/** One store call over a batch: `store.setBits`, `store.testBits`, or a counting store's removal. */
export type BatchOperation<Sync extends boolean> = (batch: PositionBatch, out: Uint8Array) => Outcome<Sync, void>

/** A batch and the answers the store writes for it. */
interface Buffers {
  readonly batch: PositionBatch
  readonly out: Uint8Array
}

/**
 * A Bloom filter over any {@link BitStore}: core hashes and validates, the store holds the bits.
 * Over a synchronous store (the memory backend) every method returns plain values and allocates
 * nothing per key; over an asynchronous one they return Promises and talk to the store once per batch.
 *
 * A backend supplies the store and its own static constructors (`create`/`open`/`import`). Public
 * methods check their arguments and that the filter is open, then call a protected hook; a backend
 * changes behaviour only by overriding those hooks (`_addHashed`, `_hasHashed`, `_addMany`,
 * `_hasMany`, `_clear`), never a public method. Hooks receive checked arguments.
 */
export class BloomFilter<Sync extends boolean = boolean> {
  /** `'fixed'`, or `'counting'` for a `CountingBloomFilter` (`LayeredFilter.kind` is `'layered'`); backends' classes narrow it. */
  readonly kind: 'fixed' | 'counting' = 'fixed'
  /** Everything that decides where keys go; identical parameters make filters mergeable. */
  readonly parameters: FilterParameters
  /** The bits. Backends reach their own store type through their constructor's argument. */
  protected readonly store: BitStore<Sync>
  /** Hashes keys with `parameters.seed`; `hash(key)` leaves the key's two lanes in `pair`. */
  protected readonly hasher: KeyHasher
  /** Plain values or Promises: every method's result goes through this. */
  protected readonly io: SyncAsync<Sync>
  /** Bits in each shard. */
  protected readonly shardBits: number
  private readonly fillPositions: ReturnType<typeof positionsOf>
  /** Reused by single-key calls where calls cannot overlap (a synchronous store). */
  private readonly single: Buffers
  /** Reused by addMany/hasMany where calls cannot overlap; made on first use. */
  private manyBuffers: Array<Buffers | undefined> | undefined
  /** A run's pairs: used only between two yields of {@link batches}, so shared by overlapping async calls. */
  private runPairs: Int32Array | undefined
  private closed = false
  /** The store's setBits and testBits, bound once so single-key calls allocate no closure. */
  private readonly setOp: BatchOperation<Sync>
  private readonly testOp: BatchOperation<Sync>

  /**
   * @param store Holds the bits; its `parameters` are the filter's.
   * @param hasher Hashes keys with the parameters' seed (from `createKeyHasher(parameters.seed)`).
   */
  constructor(store: BitStore<Sync>, hasher: KeyHasher) {
    if (hasher.seedA !== store.parameters.seed) {
      throw new BloomError('BLOOM_INCOMPATIBLE', "the hasher's seed differs from the store's")
    }
    this.store = store
    this.hasher = hasher
    this.parameters = store.parameters
    this.io = syncAsync(store.capabilities.sync)
    this.shardBits = shardBitsOf(store.parameters)
    this.fillPositions = positionsOf(store.parameters.scheme)
    this.single = this.buffers(1)
    this.setOp = (batch, out) => this.store.setBits(batch, out)
    this.testOp = (batch, out) => this.store.testBits(batch, out)
  }

  /**
   * Bits per position: 0 for a plain filter (one bit each), 4 for a counting filter (a 4-bit
   * counter each, docs/SPEC.md section 10). Only filters with the same value merge.
   */
  get counterBits(): number {
    return 0
  }

  /** What `util.inspect` and `console.log` show: the class and the parameters, with the seed hidden ({@link inspectHidingSeed}). */
  [INSPECT](_depth: number, options: object, inspect: Inspect): string {
    return inspectHidingSeed(this, this.parameters, { closed: this.closed }, options, inspect)
  }

  /** Whether methods return plain values (true) or Promises. */
  get isSync(): Sync {
    return this.io.sync
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
    // No try/catch on this path, the memory backend's per-key hot path: with one around it, the
    // memory suite's paired rounds measured add and has ~5-10 % slower (1M and 10M keys). What can
    // fail is asked first and answered through the driver (a throw, or a rejection over an async
    // store); the default hooks catch their store's throws themselves.
    const refused = this.refusal(key)
    if (refused !== undefined) return this.io.fail(refused)
    const hasher = this.hasher
    hasher.hash(key)
    const pair = hasher.pair
    return this._addHashed(pair[0], pair[1])
  }

  /**
   * Whether the key may be in the filter: false means definitely not added; true means added or,
   * with probability about {@link errorRate}, a false positive.
   */
  has(key: BloomKey): Outcome<Sync, boolean> {
    // As add: no try/catch on the hot path.
    const refused = this.refusal(key)
    if (refused !== undefined) return this.io.fail(refused)
    const hasher = this.hasher
    hasher.hash(key)
    const pair = hasher.pair
    return this._hasHashed(pair[0], pair[1])
  }

  /**
   * Adds keys in one batch per store round trip; results (new or not) are in input order.
   *
   * If reading `keys` throws (a generator that fails midway), the call fails with that error.
   * Keys before the failure may have been added, in whole batches of up to 16 384 keys sent
   * before it (one key at a time over a memory filter): adding is idempotent, so retry the whole
   * input. Keys after the failure were not read, so they were not added.
   */
  addMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.io.call(() => {
      this.checkOpen()
      return this._addMany(checkKeys(keys))
    })
  }

  /** Checks keys in one batch per store round trip; results are in input order. */
  hasMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.io.call(() => {
      this.checkOpen()
      return this._hasMany(checkKeys(keys))
    })
  }

  /**
   * Estimates the distinct keys added, from the set bits of each shard
   * (n ≈ −(m/k)·ln(1 − X/m), as Guava's approximateElementCount and RedisBloom's BF.CARD).
   */
  estimateCount(): Outcome<Sync, number> {
    return this.io.call(() => {
      this.checkOpen()
      return this.io.then(this.store.countBits(), (counts) => itemsFromSetBits(counts, this.parameters))
    })
  }

  /**
   * The set bits of each shard, in shard order (a counting filter: its non-zero counters), for
   * monitoring fill: shard s is `counts[s] / (bits / shards)` full. One pass over the bits, as
   * {@link estimateCount} and {@link errorRate} make.
   */
  countSetBits(): Outcome<Sync, number[]> {
    return this.io.call(() => {
      this.checkOpen()
      return this.io.then(this.store.countBits(), (counts) => Array.from(counts))
    })
  }

  /**
   * The false-positive probability of a `has` now, at the current fill: for a classic filter the
   * mean over shards of fill^k; for a blocked one the model's rate at the estimated count.
   */
  errorRate(): Outcome<Sync, number> {
    return this.io.call(() => {
      this.checkOpen()
      return this.io.then(this.store.countBits(), (counts) => errorRateFromSetBits(counts, this.parameters))
    })
  }

  /** Unsets every bit. */
  clear(): Outcome<Sync, void> {
    return this.io.call(() => {
      this.checkOpen()
      return this._clear()
    })
  }

  /**
   * ORs another filter's bits into this one, so this one holds the keys of both. Plain values when
   * both filters are synchronous, a Promise otherwise.
   * @throws BloomError `BLOOM_INCOMPATIBLE` unless both have identical parameters.
   */
  merge<OtherSync extends boolean>(other: BloomFilter<OtherSync>): Outcome<Sync extends true ? OtherSync : false, void> {
    const io = syncAsyncOfBoth(this.io, (other as BloomFilter<OtherSync> | undefined)?.io)
    return io.call(() => {
      this.checkOpen()
      if (!(other instanceof BloomFilter)) throw invalidParameter('merge: other', 'a fixed or counting bloomkit filter of the same parameters', other)
      if (other.closed) throw new BloomError('BLOOM_CLOSED', 'merge: the other filter is closed')
      if (other === (this as unknown)) return undefined
      assertSameParameters(this.parameters, other.parameters, 'merge: the other filter')
      if (other.counterBits !== this.counterBits) throw mixedKindsError(this.counterBits, other.counterBits)
      return io.forEach(shardRanges(this.parameters), ({ shard, offset, length }) =>
        io.then(other.store.readShard(shard, offset, length), (bytes) => this.store.orShard(shard, offset, bytes)),
      )
    })
  }

  /** Throws a TypeError: a filter has no JSON form (`JSON.stringify(filter)` would write internals nothing can load); use {@link export}. */
  toJSON(): never {
    throw noJsonForm()
  }

  /**
   * The portable snapshot (docs/SPEC.md): a header, the bits in Redis SETBIT order, a CRC-32.
   * Holds the whole filter in memory; for large filters use {@link exportChunks}.
   */
  export(): Outcome<Sync, Uint8Array> {
    return this.io.call(() => {
      this.checkOpen()
      return exportSnapshot(this.io, this.store, this.parameters)
    })
  }

  /** The snapshot as a stream of chunks of at most 1 MiB of bits, so any size exports in bounded memory. */
  async *exportChunks(): AsyncIterableIterator<Uint8Array> {
    this.checkOpen()
    yield* snapshotChunks(this.store, this.parameters, await this.estimateCount())
  }

  /** Releases the store; idempotent. Later calls fail with `BLOOM_CLOSED`. */
  close(): Outcome<Sync, void> {
    return this.io.call(() => {
      if (this.closed) return undefined
      this.closed = true
      return this.store.close()
    })
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  // Hooks: what a backend may override. Each receives checked arguments of an open filter. Over an
  // asynchronous store a hook reports failure by rejecting, never by throwing: add and has call
  // _addHashed and _hasHashed outside any try/catch (see add).

  /**
   * Adds the key whose two hash lanes are `a`, `b` (the hasher's `pair`, signed 32-bit; see
   * docs/SPEC.md "Hashing"). Default: one `store.setBits` call with a batch of one. A backend whose
   * bits sit in memory may set them in place instead (the memory backend uses `ArrayProbe`); it
   * must set exactly the bits the default would, which `bloomFilterSuite` checks.
   */
  protected _addHashed(a: number, b: number): Outcome<Sync, boolean> {
    return this.one(a, b, this.setOp)
  }

  /** Whether every bit of the key hashed to `a`, `b` is set; default: one `store.testBits` call. See {@link _addHashed}. */
  protected _hasHashed(a: number, b: number): Outcome<Sync, boolean> {
    return this.one(a, b, this.testOp)
  }

  /**
   * Adds `keys` (already checked to be iterable); answers in input order. Default: hashes batches
   * of 16 384 keys into a {@link PositionBatch} and sends each in one `store.setBits`, keeping two
   * batches in flight over an asynchronous store.
   */
  protected _addMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.many(keys, this.setOp)
  }

  /** Checks `keys`; answers in input order. Default: as {@link _addMany}, with `store.testBits`. */
  protected _hasMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.many(keys, this.testOp)
  }

  /** Unsets every bit. Default: `store.clear()`. A backend that clears another way (a new generation of keys) overrides this. */
  protected _clear(): Outcome<Sync, void> {
    return this.store.clear()
  }

  /** Hashes `key` into slot `index` of `batch`: its shard and its positions there. */
  protected locate(key: BloomKey, batch: PositionBatch, index: number): void {
    const hasher = this.hasher
    hasher.hash(key)
    this.place(hasher.pair[0], hasher.pair[1], batch, index)
  }

  /** @throws BloomError `BLOOM_CLOSED` once {@link close} was called. */
  protected checkOpen(): void {
    if (this.closed) throw closedError()
  }

  /** Why `add` or `has` cannot take `key`: the filter is closed, or the key is no string or Uint8Array, or a Uint8Array whose buffer was detached. */
  protected refusal(key: BloomKey): BloomError | undefined {
    if (this.closed) return closedError()
    return keyRefusal(key)
  }

  private place(a: number, b: number, batch: PositionBatch, index: number): void {
    const { shards, hashes } = this.parameters
    batch.shards[index] = shardOf(a, b, shards)
    this.fillPositions(a >>> 0, b >>> 0, this.shardBits, hashes, batch.positions, index * hashes)
    batch.pairs[2 * index] = a
    batch.pairs[2 * index + 1] = b
  }

  private buffers(keys: number): Buffers {
    return { batch: new PositionBatch(keys, this.parameters.hashes), out: new Uint8Array(keys) }
  }

  /** `operation` on a batch of the one key hashed to `a`, `b`; its answer as a boolean. */
  protected one(a: number, b: number, operation: BatchOperation<Sync>): Outcome<Sync, boolean> {
    // A store may throw instead of rejecting; over an async store the caller must get a rejection.
    try {
      const { batch, out } = this.io.scratch(() => this.single, () => this.buffers(1))
      this.place(a, b, batch, 0)
      batch.size = 1
      return this.io.then(operation(batch, out), () => out[0] === 1)
    } catch (error) {
      return this.io.fail(error)
    }
  }

  /** `operation` on `keys` in batches (see {@link batches}); answers in input order. */
  protected many(keys: Iterable<BloomKey>, operation: BatchOperation<Sync>): Outcome<Sync, boolean[]> {
    const results: boolean[] = []
    const pipelined = this.io.pipeline(
      this.batches(keys),
      ({ batch, out }) => this.io.then(operation(batch, out), () => ({ size: batch.size, out })),
      ({ size, out }) => {
        for (let i = 0; i < size; i++) results.push(out[i] === 1)
      },
    )
    return this.io.then(pipelined, () => results)
  }

  /**
   * `keys` hashed into batches of at most {@link BATCH_KEYS}, alternating between two buffers: the
   * pipeline keeps at most two batches in flight and settles one before the generator fills a
   * third, so a buffer is refilled only after the store has answered for it.
   */
  private *batches(keys: Iterable<BloomKey>): Generator<Buffers> {
    const pair = this.io.scratch<Array<Buffers | undefined>>(() => (this.manyBuffers ??= []), () => [])
    // An array's length bounds the buffers: an async call gets fresh ones, and a 1000-key call
    // would otherwise allocate (and zero) two batches of 16 384 keys, ~1 MiB, to use 6 % of it.
    const wanted = Array.isArray(keys) ? Math.max(1, Math.min(BATCH_KEYS, keys.length)) : BATCH_KEYS
    let turn = 0
    let current: Buffers | undefined
    const next = (): Buffers => {
      let buffers = pair[turn & 1]
      if (buffers === undefined || buffers.out.length < wanted) buffers = pair[turn & 1] = this.buffers(wanted)
      buffers.batch.size = 0
      turn++
      return buffers
    }
    if (Array.isArray(keys)) {
      // An array is hashed a run at a time (KeyHasher.hashMany: a run of strings encoded once; issue 36).
      const pairs = (this.runPairs ??= new Int32Array(2 * HASH_RUN))
      for (let from = 0; from < keys.length; ) {
        current ??= next()
        const { batch } = current
        const count = Math.min(HASH_RUN, keys.length - from, current.out.length - batch.size)
        this.hasher.hashMany(keys as readonly BloomKey[], from, count, pairs)
        for (let i = 0; i < count; i++) this.place(pairs[2 * i], pairs[2 * i + 1], batch, batch.size++)
        from += count
        if (batch.size === current.out.length) {
          yield current
          current = undefined
        }
      }
    } else {
      for (const key of keys) {
        current ??= next()
        const { batch } = current
        this.locate(key, batch, batch.size++)
        if (batch.size === current.out.length) {
          yield current
          current = undefined
        }
      }
    }
    if (current !== undefined) yield current
  }
}
