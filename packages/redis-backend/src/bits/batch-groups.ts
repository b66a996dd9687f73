// How a batch's keys are grouped into Redis calls by RedisBitStore: by shard, into block-read
// calls of bounded size, and into keys whose positions share one 512-bit block or not.
import type { PositionBatch, ShardGroup } from '@bloomkit/core/store'
import { chunksOf } from './parts.js'

/**
 * Keys per block-read script call. A batch's calls are all sent at once, so the server works on
 * the first while the client still encodes the next, and a call's Lua loop stays short.
 */
const BLOCK_KEYS_PER_CALL = 256

/** Packs groups (split where needed) into calls of at most {@link BLOCK_KEYS_PER_CALL} keys. */
export function packCalls(groups: ShardGroup[]): ShardGroup[][] {
  const parts = groups.map(({ shard, keys }) => ({ shard, keys, from: 0, to: keys.length }))
  return chunksOf(parts, BLOCK_KEYS_PER_CALL).map((call) => call.map(({ shard, keys, from, to }) => ({ shard, keys: keys.subarray(from, to) })))
}

const NONE = new Uint32Array(0)

/**
 * The batch's keys by shard, shards ascending, input order within each: core's groupByShard, by a
 * counting sort when the filter has few shards for the batch (no Map, one array of keys). Kept
 * here rather than in core's PositionBatch, which every browser bundle carries (~0.27 KB gzip
 * more there) while only this store sends batches of many keys per shard.
 */
export function groupByShard(batch: PositionBatch, shardCount: number): ShardGroup[] {
  const { size, shards } = batch
  if (shardCount > 4 * size + 64) return batch.groupByShard()
  const starts = new Uint32Array(shardCount + 1)
  for (let i = 0; i < size; i++) starts[shards[i] + 1]++
  for (let s = 0; s < shardCount; s++) starts[s + 1] += starts[s]
  const fill = starts.slice(0, shardCount)
  const sorted = new Uint32Array(size)
  for (let i = 0; i < size; i++) sorted[fill[shards[i]]++] = i
  const groups: ShardGroup[] = []
  for (let s = 0; s < shardCount; s++) if (starts[s + 1] > starts[s]) groups.push({ shard: s, keys: sorted.subarray(starts[s], starts[s + 1]) })
  return groups
}

/**
 * The keys whose positions all lie in one 512-bit block (every key, when the positions come from
 * the blocked layout's hashing), and the others, which go per bit.
 */
export function splitByBlock(batch: PositionBatch, keys: Uint32Array): [Uint32Array, Uint32Array] {
  const { positions, hashes } = batch
  let spread: number[] | undefined
  for (let k = 0; k < keys.length; k++) {
    const first = keys[k] * hashes
    const block = positions[first] >>> 9
    for (let p = first + 1; p < first + hashes; p++) {
      if (positions[p] >>> 9 !== block) {
        ;(spread ??= []).push(keys[k])
        break
      }
    }
  }
  if (spread === undefined) return [keys, NONE]
  const others = new Set(spread)
  return [keys.filter((key) => !others.has(key)), Uint32Array.from(spread)]
}
