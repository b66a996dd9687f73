// What a replica does with a filter's feeds (docs/SPEC.md 9.12), as tests need it: read a shard's
// feed as entries, and replay add entries into a local copy of the bits, to compare with the
// server's. Built on the library's own entry decoding and hashing.
import type { FilterParameters } from '@bloomkit/core'
import { layeredBatch, SET_BITS, shardBytesOf, testOrSetBatch } from '@bloomkit/core/store'
import { expect } from 'vitest'
import { decodeFeedEntry, type FeedEntry } from '../../src/layout/feed.js'
import type { KeyNames } from '../../src/layout/key-names.js'
import type { RedisClient } from '../../src/wire/client.js'

const { layerBatch } = layeredBatch

/** The part of an ioredis client these helpers use (the Buffer forms: entries are binary). */
type Client = RedisClient & {
  xrangeBuffer(key: string, start: string, end: string): Promise<Array<[Buffer, Buffer[]]>>
}

/** Every entry of `key`'s stream, oldest first (none when the key is missing). */
/** Keys `prefix:from` … `prefix:(to − 1)`. */
export const keyRange = (prefix: string, from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `${prefix}:${from + i}`)

/** 4 shards of 64 blocks (blocked layout, k = 7): small enough to fill to half with a few thousand keys. */
export const SMALL_FED: FilterParameters = { bits: 4 * 64 * 512, hashes: 7, shards: 4, seed: 5, scheme: 2, layout: 'blocked' }

export async function feedEntries(client: RedisClient, key: string): Promise<FeedEntry[]> {
  const raw = await (client as Client).xrangeBuffer(key, '-', '+')
  return raw.map(([id, fields]) => decodeFeedEntry(id.toString(), fields))
}

/** Each shard's feed entries, by shard. */
export async function allFeeds(client: RedisClient, names: KeyNames, shards: number): Promise<FeedEntry[][]> {
  return Promise.all(Array.from({ length: shards }, (_, shard) => feedEntries(client, names.feed(shard))))
}

/**
 * The bits the add entries of `feeds` (per shard, from a shard's reset on) set in empty shards
 * (or in a copy of `base`, the bits loaded at the resets), laid out as the memory filter's
 * (shard after shard). Every key of an entry must belong to the
 * entry's shard.
 */
export function replay(parameters: FilterParameters, feeds: readonly FeedEntry[][], base?: Uint8Array): Uint8Array {
  const shardBytes = shardBytesOf(parameters)
  const bits = base === undefined ? new Uint8Array(shardBytes * parameters.shards) : Uint8Array.from(base)
  feeds.forEach((entries, shard) => {
    for (const entry of entries) {
      if (entry.kind !== 'add') continue
      const batch = layerBatch(parameters, entry.pairs)
      for (let i = 0; i < batch.size; i++) expect(batch.shards[i], `a key of entry ${entry.id} in shard ${shard}'s feed`).toBe(shard)
      testOrSetBatch(bits, shardBytes, batch, new Uint8Array(batch.size), SET_BITS)
    }
  })
  return bits
}

/** The server's bits of every live shard (without markers), laid out as {@link replay}'s. */
export async function serverBits(client: RedisClient, names: KeyNames, parameters: FilterParameters): Promise<Uint8Array> {
  const shardBytes = shardBytesOf(parameters)
  const bits = new Uint8Array(shardBytes * parameters.shards)
  for (let shard = 0; shard < parameters.shards; shard++) bits.set(await client.getrangeBuffer(names.shard(shard), 0, shardBytes - 1), shard * shardBytes)
  return bits
}

/** Bit positions (shard-major) set in `a` and not in `b`, at most `limit` of them. */
export function bitsOnlyIn(a: Uint8Array, b: Uint8Array, limit = 10): number[] {
  const found: number[] = []
  for (let i = 0; i < a.length && found.length < limit; i++) {
    const extra = a[i] & ~b[i]
    for (let bit = 0; bit < 8; bit++) if (extra & (0x80 >> bit)) found.push(i * 8 + bit)
  }
  return found
}
