// Loading one shard into a replica (docs/SPEC.md 9.13): the feed's last entry is taken in the same
// step as the first bytes, the rest follows in 1 MiB reads (each with the marker), then a catch-up
// from that entry proves the feed still holds it, so that no reset came between (the bits read are
// then of that entry's time or later, and the entries after it complete them).
import { decodeFeedEntry } from '../layout/feed.js'
import { dataLost } from '../errors.js'
import { IO_CHUNK_BYTES, type ShardGenerations } from '../layout/shard-generations.js'
import { runScript } from '../wire/script.js'
import { catchUp, FRESH, LOST } from './catch-up.js'
import type { ReplicaShards } from './replica-shards.js'
import { LOAD_CHUNK } from './replica-scripts.js'

/** Times a load starts again when its position went away while it read (resets in quick succession). */
const LOAD_ATTEMPTS = 3

/** What a load of a shard came to. */
export type LoadOutcome = 'loaded' | 'no-feed' | 'moved'

/**
 * Loads `shard` into `replica` and marks it ready: 'loaded'. 'no-feed' when the shard has no feed
 * entry to start from (a format-2 feed missing: evicted, expired, deleted, until the next reset),
 * 'moved' when its position was gone again at each of a few attempts; the shard then stays not
 * ready (calls ask Redis), and the caller tries later.
 * @throws BloomError `BLOOM_DATA_LOST` (the shard key is lost), the meta's verdict, `BLOOM_CORRUPT_STORE`, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function loadShard(generations: ShardGenerations, replica: ReplicaShards, shard: number): Promise<LoadOutcome> {
  for (let attempt = 0; attempt < LOAD_ATTEMPTS; attempt++) {
    replica.beginLoad(shard)
    const begun = replica.loadsBegun[shard]
    if (!(await readShard(generations, replica, shard))) return 'no-feed'
    const began = performance.now()
    const { status } = await catchUp(generations, replica, [shard], `load ${generations.names.shard(shard)}`)
    if (status[shard] === LOST) throw dataLost(`load ${generations.names.shard(shard)}`)
    if (status[shard] === FRESH && replica.loadsBegun[shard] === begun) {
      replica.verifiedAt[shard] = began
      replica.ready[shard] = 1
      replica.loads++
      return 'loaded'
    }
  }
  return 'moved'
}

/** Reads the shard's bits into the replica and sets its position; false when its feed has no entry. */
async function readShard(generations: ShardGenerations, replica: ReplicaShards, shard: number): Promise<boolean> {
  const { client, names, shardBytes, timeout } = generations
  const feed = names.feed(shard)
  const key = names.shard(shard)
  const what = `load ${key}`
  for (let at = 0; at < shardBytes; at += IO_CHUNK_BYTES) {
    const end = Math.min(shardBytes, at + IO_CHUNK_BYTES)
    const first = at === 0
    const [marker, bytes, last] = (await runScript(client, LOAD_CHUNK, [2, feed, key, shardBytes, at, end - 1, first ? '1' : '0'], timeout, what)) as [Buffer, Buffer, Array<[Buffer, Buffer[]]>]
    if (marker.length !== 4 || !generations.accepts(marker.readUInt32BE(0), 'live') || bytes.length !== end - at) throw dataLost(what)
    if (first) {
      if (last.length === 0) return false
      const entry = decodeFeedEntry(last[0][0].toString('latin1'), last[0][1])
      replica.positions[shard] = { id: entry.id, tag: entry.tag }
    }
    replica.write(shard, at, bytes)
  }
  return true
}
