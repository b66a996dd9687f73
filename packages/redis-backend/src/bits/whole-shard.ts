// A batch that puts many keys into one shard reads or ORs the whole shard: one GETRANGE, or one
// transaction, instead of a BITFIELD operation per bit. The client tests and sets the bits on the
// shard's bytes as Redis stores them (SETBIT order: bit p is bit 7 − p % 8 of byte ⌊p / 8⌋),
// followed by the marker.
import { SET_BITS, TEST_BITS, testOrSetGroup, type PositionBatch } from '@bloomkit/core/store'
import { dataLost, storeError } from '../errors.js'
import { addArguments, addValue } from '../layout/feed.js'
import type { Generation, ShardGenerations } from '../layout/shard-generations.js'
import { OR_SCRATCH } from './bit-scripts.js'

/** The largest shard (bits and marker) a batch reads or ORs whole: no command moves more than 4 MiB. */
export const MAX_SCAN_BYTES = 4 << 20
/** Milliseconds a batch's scratch key lives should its transaction fail halfway (it is deleted at once otherwise). */
const SCRATCH_TTL_MS = 60_000

/** Tests the keys' bits in a copy of the whole shard: one GETRANGE, which also reads the marker. */
export async function readWhole(shards: ShardGenerations, generation: Generation, shard: number, batch: PositionBatch, keys: Uint32Array, out: Uint8Array): Promise<void> {
  const key = shards.key(shard, generation)
  const what = `has on ${key}`
  const bytes = await shards.call(shards.client.getrangeBuffer(key, 0, shards.shardBytes + 3), what)
  if (!shards.accepts(markerOf(bytes, shards.shardBytes), generation)) throw dataLost(what)
  testOrSetGroup(bytes, batch.positions, batch.hashes, keys, 0, keys.length, out, TEST_BITS)
}

/**
 * Adds the keys with one transaction on the shard's slot: SET the batch's bits into the
 * scratch key, GETRANGE the shard (its bits before the batch, and its marker), and OR the
 * scratch key into it (and into the next generation while a rebuild runs). MULTI/EXEC makes the
 * three one atomic step, so the old bits say exactly which keys were new, as BITFIELD's
 * replies would. A live shard of a filter with a feed gets the keys' entry in the same step.
 */
export async function orWhole(shards: ShardGenerations, generation: Generation, shard: number, batch: PositionBatch, keys: Uint32Array, out: Uint8Array): Promise<void> {
  const { client, names, shardBytes } = shards
  const key = shards.key(shard, generation)
  const what = `add on ${key}`
  const delta = Buffer.alloc(shardBytes)
  // The batch's own bits; which keys were new comes from the shard's old bits below.
  testOrSetGroup(delta, batch.positions, batch.hashes, keys, 0, keys.length, out, SET_BITS)
  const transaction = client
    .multi()
    .set(names.scratch(shard), delta, 'PX', SCRATCH_TTL_MS)
    .getrangeBuffer(key, 0, shardBytes + 3)
    .eval(OR_SCRATCH, 3, key, names.scratch(shard), names.nextShard(shard), shardBytes, shards.markerPlain, shards.otherMarker(generation), generation === 'live' ? '1' : '0')
  if (generation === 'live' && shards.feedLength > 0) transaction.call('xadd', names.feed(shard), ...addArguments(shards.feedLength, addValue(batch, keys, 0, keys.length)))
  const replies = await shards.call(transaction.exec(), what)
  if (replies === null) throw storeError(new Error('transaction aborted'), what)
  for (const [error] of replies) if (error) throw storeError(error, what)
  const bytes = replies[1][1] as Buffer
  if (!shards.accepts(markerOf(bytes, shardBytes), generation)) throw dataLost(what)
  testOrSetGroup(bytes, batch.positions, batch.hashes, keys, 0, keys.length, out, SET_BITS)
}

/**
 * ORs `bits` (a whole shard's bits, built by the caller) into the next generation of `shard` with
 * one transaction on the shard's slot: SET the scratch key, then OR it in with BITOP (OR_SCRATCH).
 * Bits other clients added to the next generation meanwhile stay. For a rebuild that hashed its
 * keys locally: a shard travels once instead of as a BITFIELD operation per bit.
 */
export async function orIntoNext(shards: ShardGenerations, shard: number, bits: Uint8Array): Promise<void> {
  const { client, names, shardBytes } = shards
  const key = names.nextShard(shard)
  const what = `rebuild ${key}`
  const replies = await shards.call(
    client
      .multi()
      .set(names.scratch(shard), Buffer.from(bits.buffer, bits.byteOffset, bits.length), 'PX', SCRATCH_TTL_MS)
      .eval(OR_SCRATCH, 3, key, names.scratch(shard), key, shardBytes, shards.markerPlain, shards.otherMarker('next'), '0')
      .exec(),
    what,
  )
  if (replies === null) throw storeError(new Error('transaction aborted'), what)
  for (const [error] of replies) if (error) throw storeError(error, what)
  if (Number(replies[1][1]) !== 1) throw dataLost(what)
}

/**
 * The 4-byte marker after a shard's `shardBytes` bytes of bits, or −1 when `shard` (a GETRANGE of
 * bits and marker) is shorter: the key is missing or truncated.
 */
export function markerOf(shard: Uint8Array, shardBytes: number): number {
  if (shard.length !== shardBytes + 4) return -1
  return ((shard[shardBytes] << 24) | (shard[shardBytes + 1] << 16) | (shard[shardBytes + 2] << 8) | shard[shardBytes + 3]) >>> 0
}
