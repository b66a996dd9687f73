import type { FilterParameters } from './parameters.js'
import type { PositionBatch } from './bits/position-batch.js'

/** `T` for a synchronous store, `Promise<T>` for an asynchronous one. */
export type Outcome<Sync extends boolean, T> = Sync extends true ? T : Promise<T>

/** What a store can do; the filter and the conformance suite read these rather than option flags. */
export interface BitStoreCapabilities {
  /** Every method returns its result directly, never a Promise. */
  readonly sync: boolean
  /** Bits survive the process (a file, a server). */
  readonly persistent: boolean
  /** Several processes or clients may use the same bits at once. */
  readonly shared: boolean
}

/**
 * Where a filter's bits live. The filter validates and hashes; a store only does I/O, on positions
 * that are already in range (below the shard's bit count) and shard numbers below `shards`.
 *
 * The contract, checked by `bitStoreSuite` from `@bloomkit/core/testing`:
 * - Bits are numbered per shard; bit `p` of a shard is bit `7 − p % 8` (counting from the least
 *   significant) of byte `⌊p / 8⌋` of the shard — Redis SETBIT order.
 * - `setBits` sets each key's bits atomically per key: a concurrent `testBits` sees all of a key's
 *   bits or the state before, never a key half-added that reads as absent once added.
 * - A failed call rejects (or throws) with the store's error; a store never reports bits as unset
 *   because it could not read them.
 *
 * @typeParam Sync `true` for stores whose methods return plain values (see {@link BitStoreCapabilities.sync}).
 */
export interface BitStore<Sync extends boolean = boolean> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: Sync }
  /** The parameters the store was created for; it holds `shards` shards of `bits / shards` bits. */
  readonly parameters: FilterParameters

  /**
   * Sets every key's bits. `out[i]` becomes 1 where key `i` had at least one bit unset before
   * (it was new), 0 where all its bits were already set.
   */
  setBits(batch: PositionBatch, out: Uint8Array): Outcome<Sync, void>
  /** `out[i]` becomes 1 where all of key `i`'s bits are set, 0 otherwise. */
  testBits(batch: PositionBatch, out: Uint8Array): Outcome<Sync, void>
  /** The number of set bits in each shard, indexed by shard. */
  countBits(): Outcome<Sync, ArrayLike<number>>
  /** `length` bytes of shard `shard` from byte `offset`, in the bit order above. */
  readShard(shard: number, offset: number, length: number): Outcome<Sync, Uint8Array>
  /** Overwrites bytes of shard `shard` from byte `offset`. */
  writeShard(shard: number, offset: number, bytes: Uint8Array): Outcome<Sync, void>
  /** ORs `bytes` into shard `shard` from byte `offset` (used by merge). */
  orShard(shard: number, offset: number, bytes: Uint8Array): Outcome<Sync, void>
  /** Unsets every bit. */
  clear(): Outcome<Sync, void>
  /** Releases the store's resources; idempotent. Bits of a persistent store stay where they are. */
  close(): Outcome<Sync, void>
}
