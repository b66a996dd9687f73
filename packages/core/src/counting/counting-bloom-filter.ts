import type { BitStore, Outcome } from '../bit-store.js'
import { BloomFilter, type BatchOperation } from '../bloom-filter.js'
import { shardRanges } from '../format/chunks.js'
import { COUNTER_BITS, plainBitsOf } from './counter-kernels.js'
import { crc32 } from '../format/crc32.js'
import { BloomError, checkKeys, closedError } from '../errors.js'
import type { BloomKey, KeyHasher } from '../hashing/key-hasher.js'
import { assertSameParameters, shardBytesOf, type FilterParameters } from '../parameters.js'
import { itemsFromSetBits } from '../fill.js'
import { encodeCountingHeader } from '../format/counting-snapshot.js'
import { encodeSnapshotHeader, snapshotBytes, trailer } from '../format/snapshot.js'
import { syncAsyncOfBoth, type SyncAsync } from '../sync-async.js'

/**
 * Where a counting filter's counters live: a {@link BitStore} whose positions hold 4-bit counters
 * (docs/SPEC.md, section 10) instead of bits, read as set when non-zero. The methods it shares with
 * `BitStore` mean, for counters:
 * - `setBits` increments each of a key's counters that is below 15, atomically per key; `out[i]`
 *   is 1 where at least one of key `i`'s counters was 0 before (it was new).
 * - `testBits`: `out[i]` is 1 where all of key `i`'s counters are non-zero.
 * - `countBits`: the non-zero counters of each shard (so a filter's estimates read the same as a
 *   plain filter's bits would give).
 * - `readShard`/`writeShard` address counter bytes: a shard holds `shardBits / 2` of them, in the
 *   nibble order of section 10.
 * - `orShard` adds the counters in `bytes` into the shard's, each sum capped at 15 (merge).
 */
export interface CounterStore<Sync extends boolean = boolean> extends BitStore<Sync> {
  /** Bits per counter: 4. */
  readonly counterBits: number
  /**
   * Removes each key, atomically per key: where all its counters are non-zero, decrements each
   * that is below 15 (a saturated counter stays at 15 for good) and sets `out[i]` to 1; where
   * any is 0, changes nothing and sets `out[i]` to 0.
   */
  removeBits(batch: import('../bits/position-batch.js').PositionBatch, out: Uint8Array): Outcome<Sync, void>
  /** Counters at 15 (saturated, never decremented again) over all shards. */
  countSaturated(): Outcome<Sync, number>
}

/** What {@link CountingBloomFilter.describeCounters} reports. */
export interface CounterReport {
  /** Counters in all: the filter's `bits`. */
  readonly counters: number
  /** Counters above 0: the bits a plain export sets. */
  readonly nonZero: number
  /** Counters at 15: they never go down again, and keys whose counters are all saturated can no longer be removed. */
  readonly saturated: number
}

/**
 * A counting Bloom filter (docs/SPEC.md, section 10): the plain filter's hashing and positions with
 * a 4-bit counter in place of each bit, so that keys can be removed as well as added.
 *
 * The promise, restated for removal:
 * - Every key added, and not removed as often as it was added, is present (`has` is true).
 * - A counter that reaches 15 stays at 15 (sticky): saturation can never create a false negative.
 * - `remove` of a key that reads absent changes nothing and returns false.
 * - Removing a key that was never added but reads present (a false positive) is the one way to
 *   hurt other keys: it decrements counters that belong to them. `remove` is for keys you added.
 *
 * Memory and storage: exactly 4 bits per position, 4× a plain filter of the same parameters.
 */
export class CountingBloomFilter<Sync extends boolean = boolean> extends BloomFilter<Sync> {
  /** Tells a counting filter from a fixed (`'fixed'`) or layered (`'layered'`) one. */
  override readonly kind = 'counting' as const
  /** The counters (a {@link CounterStore}); `store` as the base class sees it. */
  protected readonly counters: CounterStore<Sync>
  private readonly removeOp: BatchOperation<Sync>

  /**
   * @param store Holds the counters; its `parameters` are the filter's.
   * @param hasher Hashes keys with the parameters' seed (from `createKeyHasher(parameters.seed)`).
   */
  constructor(store: CounterStore<Sync>, hasher: KeyHasher) {
    super(store, hasher)
    if (store.counterBits !== COUNTER_BITS) {
      throw new BloomError('BLOOM_INCOMPATIBLE', `counter store has ${store.counterBits}-bit counters; counting filters use ${COUNTER_BITS}`)
    }
    this.counters = store
    this.removeOp = (batch, out) => store.removeBits(batch, out)
  }

  /** The store holding the counters. (The non-zero counters of each shard, as the command line's `inspect` shows them: {@link countSetBits}.) */
  get counterStore(): CounterStore<Sync> {
    return this.counters
  }

  /** 4: bits per counter. */
  override get counterBits(): number {
    return COUNTER_BITS
  }

  /**
   * Removes a key you added: true if it read present and its counters were decremented, false if
   * it read absent (nothing changed). A key added n times stays present until removed n times
   * (unless its counters saturated: then it stays for good).
   * @throws BloomError `BLOOM_INVALID_KEY`, `BLOOM_CLOSED`, or the store's error.
   */
  remove(key: BloomKey): Outcome<Sync, boolean> {
    const refused = this.refusal(key)
    if (refused !== undefined) return this.io.fail(refused)
    const hasher = this.hasher
    hasher.hash(key)
    const pair = hasher.pair
    return this._removeHashed(pair[0], pair[1])
  }

  /**
   * Removes keys in one batch per store round trip, in order (a key listed twice is removed twice);
   * results (removed or read absent) in input order. As with `addMany`, a failure midway may leave
   * whole batches before it removed: unlike adding, removing again is not idempotent, so find out
   * which keys are still present before retrying.
   */
  removeMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.io.call(() => {
      this.checkOpen()
      return this._removeMany(checkKeys(keys))
    })
  }

  /** How many counters are non-zero and how many are saturated (at 15, never decremented again). */
  describeCounters(): Outcome<Sync, CounterReport> {
    return this.io.call(() => {
      this.checkOpen()
      return this.io.then(this.counters.countBits(), (counts) =>
        this.io.then(this.counters.countSaturated(), (saturated) => {
          let nonZero = 0
          for (let s = 0; s < counts.length; s++) nonZero += counts[s]
          return { counters: this.parameters.bits, nonZero, saturated }
        }),
      )
    })
  }

  /**
   * Adds another counting filter's counters into this one (each sum capped at 15), so this one
   * holds the keys of both, each as often as the two together. Plain and counting filters do not merge.
   * @throws BloomError `BLOOM_INCOMPATIBLE` unless both are counting filters with identical parameters.
   */
  override merge<OtherSync extends boolean>(other: BloomFilter<OtherSync>): Outcome<Sync extends true ? OtherSync : false, void> {
    if (!(other instanceof CountingBloomFilter)) return super.merge(other)
    const io = syncAsyncOfBoth(this.io, (other as unknown as { io: SyncAsync<OtherSync> }).io)
    return io.call(() => {
      this.checkOpen()
      if (other.isClosed) throw new BloomError('BLOOM_CLOSED', 'merge: the other filter is closed')
      if (other === (this as unknown)) return undefined
      assertSameParameters(this.parameters, other.parameters, 'merge: the other filter')
      const source = (other as CountingBloomFilter<OtherSync>).counters
      return io.forEach(counterRanges(this.parameters), ({ shard, offset, length }) =>
        io.then(source.readShard(shard, offset, length), (bytes) => this.counters.orShard(shard, offset, bytes)),
      )
    }) as never
  }

  /**
   * The counting snapshot (docs/SPEC.md, section 10.2: version 3): the header, the counters, a
   * CRC-32. Moves byte for byte between backends. For large filters use {@link exportChunks}.
   */
  override export(): Outcome<Sync, Uint8Array> {
    return this.exportAs('counting')
  }

  /**
   * A plain filter's snapshot (version 1) of the same keys: every non-zero counter a set bit. A
   * plain filter imported from it answers `has` exactly as this one does now; it ships at a
   * quarter of the size (e.g. from a server-side counting filter to browsers).
   */
  exportPlain(): Outcome<Sync, Uint8Array> {
    return this.exportAs('plain')
  }

  /** The counting snapshot as a stream of chunks of at most 1 MiB of counters. */
  override async *exportChunks(): AsyncIterableIterator<Uint8Array> {
    this.checkOpen()
    yield encodeCountingHeader({ parameters: this.parameters, items: await this.estimateCount() })
    let crc = 0
    for (const { shard, offset, length } of counterRanges(this.parameters)) {
      const bytes = (await this.counters.readShard(shard, offset, length)).slice()
      crc = crc32(bytes, crc)
      yield bytes
    }
    yield trailer(crc)
  }

  /** Removes the key hashed to `a`, `b`. Default: one `store.removeBits` call with a batch of one. */
  protected _removeHashed(a: number, b: number): Outcome<Sync, boolean> {
    return this.one(a, b, this.removeOp)
  }

  /** Removes `keys`; answers in input order. Default: batches of 16 384 keys, one `store.removeBits` each. */
  protected _removeMany(keys: Iterable<BloomKey>): Outcome<Sync, boolean[]> {
    return this.many(keys, this.removeOp)
  }

  /** The whole snapshot: a counting one (version 3), or a plain one (version 1) of the same keys. */
  private exportAs(format: 'counting' | 'plain'): Outcome<Sync, Uint8Array> {
    const plain = format === 'plain'
    return this.io.call(() => {
      if (this.isClosed) throw closedError()
      const out = new Uint8Array(snapshotBytes(this.parameters, plain ? 0 : COUNTER_BITS))
      let at = 0
      let crc = 0
      const put = (piece: Uint8Array) => {
        out.set(piece, at)
        at += piece.length
      }
      return this.io.then(this.counters.countBits(), (counts) => {
        put((plain ? encodeSnapshotHeader : encodeCountingHeader)({ parameters: this.parameters, items: itemsFromSetBits(counts, this.parameters) }))
        const payload = this.io.forEach(counterRanges(this.parameters), ({ shard, offset, length }) =>
          this.io.then(this.counters.readShard(shard, offset, length), (counters) => {
            const bytes = plain ? plainBitsOf(counters) : counters
            crc = crc32(bytes, crc)
            put(bytes)
          }),
        )
        return this.io.then(payload, () => {
          put(trailer(crc))
          return out
        })
      })
    })
  }
}

/** Counter bytes in each shard: `shardBits / 2`. */
export function counterShardBytesOf(parameters: FilterParameters): number {
  return shardBytesOf(parameters) * COUNTER_BITS
}

/** Every counter byte of a filter, shard after shard, in ranges of at most 1 MiB (a multiple of 4 bytes, as a plain export needs). */
export function counterRanges(parameters: FilterParameters): ReturnType<typeof shardRanges> {
  return shardRanges(parameters, undefined, counterShardBytesOf(parameters))
}

/** Whether a store holds counters (a {@link CounterStore}). */
export function isCounterStore<Sync extends boolean>(store: BitStore<Sync>): store is CounterStore<Sync> {
  return typeof (store as Partial<CounterStore<Sync>>).removeBits === 'function'
}

