import { PositionBatch } from '@bloomkit/core/store'
import type { BloomKey } from '@bloomkit/core'
import { invalidParameter } from './errors.js'
import type { ShardGenerations } from './generations.js'
import { lockMeta, unlockMeta } from './meta.js'
import type { RedisBitStore } from './redis-bit-store.js'

/** Keys hashed per store call by rebuild. */
const REBUILD_BATCH = 16_384

/**
 * Replaces the filter's bits by those of `keys` (plus keys added meanwhile): next generations are
 * built while the live shards serve, every add meanwhile also goes to them (the live markers are
 * flagged first), then each shard is swapped in with one RENAME. See `RedisBloomFilter.rebuild`.
 *
 * @param locate Hashes a key into a slot of a batch (the filter's own hashing).
 * @param checkOpen Throws if the filter was closed meanwhile.
 */
export async function rebuild(
  shards: ShardGenerations,
  store: RedisBitStore,
  keys: AsyncIterable<BloomKey> | Iterable<BloomKey>,
  force: boolean,
  locate: (key: BloomKey, batch: PositionBatch, index: number) => void,
  checkOpen: () => void,
): Promise<void> {
  if (keys === null || typeof keys !== 'object' || (!(Symbol.asyncIterator in keys) && !(Symbol.iterator in keys))) {
    throw invalidParameter('keys', 'an iterable or async iterable of strings or Uint8Arrays', keys)
  }
  const name = shards.names.name
  const token = await lockMeta(shards, 'rebuilding', force)
  const next = store.nextGeneration()
  try {
    await shards.buildEmptyNext()
    await shards.forEachShard((shard) => shards.flagLive(shard, true))
    const batch = new PositionBatch(REBUILD_BATCH, shards.parameters.hashes)
    const out = new Uint8Array(REBUILD_BATCH)
    for await (const key of keys as AsyncIterable<BloomKey>) {
      checkOpen()
      locate(key, batch, batch.size++)
      if (batch.size === REBUILD_BATCH) {
        await next.setBits(batch, out)
        batch.size = 0
      }
    }
    if (batch.size > 0) await next.setBits(batch, out)
    const ttlMs = await shards.metaTtlMs(`rebuild "${name}"`)
    await shards.forEachShard((shard) => shards.swapNext(shard, ttlMs))
    await unlockMeta(shards, token, true, `rebuild "${name}"`)
  } catch (error) {
    await shards.forEachShard((shard) => shards.flagLive(shard, false).then(() => undefined, () => undefined))
    await shards.abandon(token, false)
    throw error
  }
}
