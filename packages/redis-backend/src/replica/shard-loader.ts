// Loading one shard into a replica (docs/SPEC.md 9.13): the feed's last entry is taken in the same
// step as the marker, then the bits follow in 1 MiB reads (each with the marker), several in flight
// at once, and a catch-up from that entry proves the feed still holds it, so that no reset came
// between (the bits read are then of that entry's time or later, and the entries after it complete them).
import { decodeFeedEntry } from '../layout/feed.js'
import { dataLost, storeError } from '../errors.js'
import { forEachLimited, IO_CHUNK_BYTES, type ShardGenerations } from '../layout/shard-generations.js'
import type { RedisTransaction } from '../wire/client.js'
import { catchUp, FRESH, LOST } from './catch-up.js'
import type { ReplicaShards } from './replica-shards.js'

/**
 * Reads of one shard's bits in flight at once. One read at a time waited a round trip per MiB and
 * moved ~60 MB/s here (a 1 MiB GETRANGE awaited alone took ~19 ms on a busy loopback; four in flight
 * ~3 ms each); a few in flight keep the connection busy, and bound what a large shard's load holds
 * in replies at once to this many MiB (times the shards loaded together).
 */
const READS_IN_FLIGHT = 8

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
  const { names, shardBytes } = generations
  const feed = names.feed(shard)
  const key = names.shard(shard)
  const what = `load ${key}`
  // The position first, with the marker, in one step; every read of the bits is sent after its
  // reply came back, so each is of the position's time or later, whatever order they run in.
  const [marker, last] = await transaction(generations, what, (multi) => multi.getrangeBuffer(key, shardBytes, shardBytes + 3).callBuffer('xrevrange', feed, '+', '-', 'COUNT', 1))
  checkMarker(generations, marker as Buffer, what)
  const entries = last as Array<[Buffer, Buffer[]]>
  if (entries.length === 0) return false
  const entry = decodeFeedEntry(entries[0][0].toString('latin1'), entries[0][1])
  replica.positions[shard] = { id: entry.id, tag: entry.tag }
  await forEachLimited(Math.ceil(shardBytes / IO_CHUNK_BYTES), READS_IN_FLIGHT, async (chunk) => {
    const at = chunk * IO_CHUNK_BYTES
    const end = Math.min(shardBytes, at + IO_CHUNK_BYTES)
    const [chunkMarker, bytes] = (await transaction(generations, what, (multi) => multi.getrangeBuffer(key, shardBytes, shardBytes + 3).getrangeBuffer(key, at, end - 1))) as [Buffer, Buffer]
    checkMarker(generations, chunkMarker, what)
    if (bytes.length !== end - at) throw dataLost(what)
    replica.write(shard, at, bytes)
  })
  return true
}

/** A marker read with a load's step: this filter's live marker, else the shard is lost. */
function checkMarker(generations: ShardGenerations, marker: Buffer, what: string): void {
  if (marker.length !== 4 || !generations.accepts(marker.readUInt32BE(0), 'live')) throw dataLost(what)
}

/** One MULTI/EXEC on the shard's slot (its keys share it); the replies, each checked. */
async function transaction(generations: ShardGenerations, what: string, build: (multi: RedisTransaction) => RedisTransaction): Promise<unknown[]> {
  const replies = await generations.call(build(generations.client.multi()).exec(), what)
  if (replies === null) throw storeError(new Error('transaction aborted'), what)
  return replies.map(([error, reply]) => {
    if (error) throw storeError(error, what)
    return reply
  })
}
