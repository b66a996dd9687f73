import { SET_BITS, testOrSetBatch, invalidParameter, PositionBatch } from '@bloomkit/core/store'
import type { BloomKey } from '@bloomkit/core'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { abandon, lockMeta, unlockMeta } from '../layout/meta-lock.js'
import { clearStaged } from './replace-parameters.js'
import type { RedisBitStore } from '../bits/redis-bit-store.js'
import { MAX_SCAN_BYTES, orIntoNext } from '../bits/whole-shard.js'

/** Keys hashed per store call by rebuild. */
const REBUILD_BATCH = 16_384

/** What {@link rebuild} works on, by name. */
export interface RebuildCall {
  readonly shards: ShardGenerations
  /** The filter's store: its next generation receives the new bits. */
  readonly store: RedisBitStore
  readonly keys: AsyncIterable<BloomKey> | Iterable<BloomKey>
  /** Take the lock from a rebuild, import or clear that holds it (`RebuildOptions.force`). */
  readonly force: boolean
  /** Hashes a key into a slot of a batch (the filter's own hashing). */
  readonly locate: (key: BloomKey, batch: PositionBatch, index: number) => void
  /** Throws if the filter was closed meanwhile. */
  readonly checkOpen: () => void
}

/**
 * The largest filter (bytes of bits) whose rebuild sets its keys' bits in local memory and then
 * ORs whole shards into the next generation (shards of at most 4 MiB): hundreds of times fewer
 * Redis operations than a BITFIELD per bit. Larger filters take the per-bit path.
 */
const LOCAL_REBUILD_BYTES = 256 * 2 ** 20

/**
 * Replaces the filter's bits by those of `keys` (plus keys added meanwhile): next generations are
 * built while the live shards serve, every add meanwhile also goes to them (the live markers are
 * flagged first), then each shard is swapped in with one RENAME. See `RedisBloomFilter.rebuild`.
 */
export async function rebuild(call: RebuildCall): Promise<void> {
  const { shards, store, keys, force, locate, checkOpen } = call
  if (keys === null || typeof keys !== 'object' || (!(Symbol.asyncIterator in keys) && !(Symbol.iterator in keys))) {
    throw invalidParameter('keys', 'an iterable or async iterable of strings or Uint8Arrays', keys)
  }
  const name = shards.names.name
  const token = await lockMeta(shards, 'rebuilding', { force })
  const next = store.nextGeneration()
  // Once a swap may have happened, even a failed rebuild counts a generation when it unlocks: a
  // writer that sends only the bits its block read found unset (SPEC 9.5) relies on that to see
  // that a shard was replaced between its read and its write.
  let swapping = false
  try {
    // A forced rebuild may take over from an import with new parameters that was killed.
    if (force) await clearStaged(shards)
    await shards.buildEmptyNext()
    await shards.forEachShard((shard) => shards.markLive(shard, 'flagged'))
    const batch = new PositionBatch(REBUILD_BATCH, shards.parameters.hashes)
    const out = new Uint8Array(REBUILD_BATCH)
    const { shardBytes } = shards
    const totalBytes = shards.parameters.bits / 8
    const local = totalBytes <= LOCAL_REBUILD_BYTES && shardBytes + 4 <= MAX_SCAN_BYTES ? new Uint8Array(totalBytes) : undefined
    const flush = async () => {
      if (local === undefined) await next.setBits(batch, out)
      else testOrSetBatch(local, shardBytes, batch, out, SET_BITS)
      batch.size = 0
    }
    for await (const key of keys as AsyncIterable<BloomKey>) {
      checkOpen()
      locate(key, batch, batch.size++)
      if (batch.size === REBUILD_BATCH) await flush()
    }
    if (batch.size > 0) await flush()
    if (local !== undefined) await shards.forEachShard((shard) => orIntoNext(shards, shard, local.subarray(shard * shardBytes, (shard + 1) * shardBytes)))
    const ttlMs = await shards.metaTtlMs(`rebuild "${name}"`)
    swapping = true
    await shards.forEachShard((shard) => shards.swapNext(shard, ttlMs))
    await unlockMeta(shards, token, `rebuild "${name}"`, { replaced: true })
  } catch (error) {
    await shards.forEachShard((shard) => shards.markLive(shard, 'plain').then(() => undefined, () => undefined))
    await abandon(shards, token, { replaced: swapping })
    throw error
  }
}
