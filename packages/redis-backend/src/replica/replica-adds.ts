// Adds through a replica (docs/SPEC.md 9.13): a key's positions that the replica shows set are not
// sent, and no read goes first. The replica's bits are a subset of the shard's as long as the shard
// was not replaced since its position's entry, so each shard's write is one MULTI that proves that
// in the same step: XRANGE of the position's entry (it exists, with its tag: no reset since), the
// BITFIELD of the missing positions (its first reply the marker), the XADD of the keys' entry.
// If the position is gone, the skipped bits may be gone with the old shard: those keys are written
// again in full before they are answered, and the shard loads again. A flagged marker (a rebuild
// runs) sends the keys through the filter's own path, which writes them into both generations.
import type { BitStore, PositionBatch } from '@bloomkit/core/store'
import { layeredBatch, TEST_BITS, testBitSetBit } from '@bloomkit/core/store'
import type { Command } from 'ioredis'
import { groupByShard } from '../bits/batch-groups.js'
import { bitfieldCommand } from '../bits/bitfield-command.js'
import { discardUnmarked } from '../bits/client-bitfield.js'
import { dataLost, storeError } from '../errors.js'
import { addArguments, addValue, TAG_BYTES } from '../layout/feed.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { corkWrites } from '../wire/client.js'
import type { ReplicaShards } from './replica-shards.js'

const { layerBatch } = layeredBatch

/** Keys per MULTI (as the store's BITFIELDs). */
const KEYS_PER_WRITE = 512

/** What an add through a replica needs of it. */
export interface ReplicaHost {
  readonly generations: ShardGenerations
  readonly shards: ReplicaShards
  /** The filter's own store: the full path for keys a replica cannot vouch for. */
  readonly store: BitStore<false>
  /** Loads `shard` again: an add found its position gone. */
  markStale(shard: number): void
}

/**
 * Adds the keys whose hash pairs are `pairs`; resolves to 1 (new) or 0 per key, in order.
 * @throws BloomError as the filter's add does (the meta's verdict first, `BLOOM_DATA_LOST`, …).
 */
export async function addThroughReplica(host: ReplicaHost, pairs: Uint32Array): Promise<Uint8Array> {
  const { generations, shards: replica, store } = host
  const batch = layerBatch(generations.parameters, pairs)
  const { positions, hashes, size } = batch
  const out = new Uint8Array(size)
  const skip = new Uint8Array(size * hashes)
  const again: number[] = []
  const writes: Promise<void>[] = []
  const uncork = corkWrites(generations.client)
  try {
    for (const { shard, keys } of groupByShard(batch, generations.parameters.shards)) {
      if (replica.ready[shard] === 0) {
        for (const key of keys) again.push(key)
        continue
      }
      const base = shard * replica.shardBytes
      for (const key of keys) for (let p = key * hashes, end = p + hashes; p < end; p++) skip[p] = testBitSetBit(replica.bits, base, positions[p], TEST_BITS)
      for (let from = 0; from < keys.length; from += KEYS_PER_WRITE) {
        writes.push(writeShard(host, batch, shard, keys.subarray(from, Math.min(keys.length, from + KEYS_PER_WRITE)), skip, out, again))
      }
    }
  } finally {
    uncork()
  }
  // The meta is compared beside the writes, and its verdict comes first (as the store's adds).
  const settled = await Promise.allSettled([generations.verifyMeta('add'), ...writes])
  for (const result of settled) if (result.status === 'rejected') throw result.reason
  if (again.length > 0) {
    // A key is new if either write said so (docs/SPEC.md 9.5).
    const full = layerBatch(generations.parameters, pairs, again)
    const answers = new Uint8Array(full.size)
    await store.setBits(full, answers)
    for (let j = 0; j < again.length; j++) out[again[j]] |= answers[j]
  }
  return out
}

/** One MULTI on one shard for `keys` (see the module comment); keys to write in full are pushed to `again`. */
async function writeShard(host: ReplicaHost, batch: PositionBatch, shard: number, keys: Uint32Array, skip: Uint8Array, out: Uint8Array, again: number[]): Promise<void> {
  const { generations, shards: replica } = host
  const { names, shardBytes, feedLength } = generations
  const { hashes } = batch
  const position = replica.positions[shard]!
  const loads = replica.loadsBegun[shard]
  // Keys with a position the replica shows unset are written; the others only proven present.
  const written = keys.filter((key) => {
    for (let p = key * hashes, end = p + hashes; p < end; p++) if (skip[p] === 0) return true
    return false
  })
  const key = names.shard(shard)
  const feed = names.feed(shard)
  const what = `add on ${key}`
  const transaction = generations.client.multi()
  transaction.callBuffer('xrange', feed, position.id, position.id)
  if (written.length > 0) {
    const command = bitfieldCommand(generations.keyPrefix + key, { op: 'add', markerOffset: shardBytes * 8, positions: batch.positions, hashes, keys: written, from: 0, to: written.length, skip })
    ;(transaction as unknown as { sendCommand(command: Command): unknown }).sendCommand(command)
    transaction.call('xadd', feed, ...addArguments(feedLength, addValue(batch, written, 0, written.length)))
  } else {
    transaction.getrangeBuffer(key, shardBytes, shardBytes + 3)
  }
  const replies = await generations.call(transaction.exec(), what)
  if (replies === null) throw storeError(new Error('transaction aborted'), what)
  for (const [error] of replies) if (error) throw storeError(error, what)
  const here = replies[0][1] as Array<[Buffer, Buffer[]]>
  const stands = here.length === 1 && Buffer.compare(here[0][1][1].subarray(0, TAG_BYTES), Buffer.from(position.tag)) === 0
  const reply = replies[1][1] as Array<number | string> | Buffer
  const marker = Buffer.isBuffer(reply) ? (reply.length === 4 ? reply.readUInt32BE(0) : -1) : Number(reply[0])
  if (!generations.accepts(marker, 'live')) {
    // A BITFIELD on a lost key created it without a marker: remove that debris; the error stands.
    if (written.length > 0) await discardUnmarked(generations, key)
    throw dataLost(what)
  }
  if (!stands || marker !== generations.marker) {
    // Gone: bits skipped may have gone with the old shard. Flagged: a rebuild needs them in its
    // next generation too. Either way the filter's own path writes every position again.
    for (const k of keys) again.push(k)
    if (!stands && replica.loadsBegun[shard] === loads) host.markStale(shard)
  }
  if (written.length > 0) {
    const bits = reply as Array<number | string>
    for (let k = 0, r = 1; k < written.length; k++) {
      let fresh = 0
      for (let p = written[k] * hashes, end = p + hashes; p < end; p++) if (skip[p] === 0 && Number(bits[r++]) === 0) fresh = 1
      out[written[k]] = fresh
    }
  }
  // What was written is not ORed into the bits: they must hold only what entries up to the position
  // put there. Redis back without its last writes (an older snapshot, a promoted replica) may keep
  // the position's entry and lose this write; bits set here would then make a later add of the key
  // skip positions the server no longer has. The feed's entry of this write brings them in.
}
