import { BloomError } from '@bloomkit/core'
import type { PositionBatch } from '@bloomkit/core/store'
import type { Command } from 'ioredis'
import { dataLost, storeError } from '../errors.js'
import { addArguments, addValue } from '../layout/feed.js'
import type { Generation, ShardGenerations } from '../layout/shard-generations.js'
import { PreEncodedCommand } from '../wire/pre-encoded-command.js'
import { bulkString, Bytes, putBulkNumber, SLACK_BYTES, viewOf } from '../wire/resp-writer.js'
import { DISCARD_UNMARKED, SET_LIVE_AND_NEXT } from './bit-scripts.js'

/** Each bit's operation before its position: `SET u1 ` or `GET u1 `. */
const SET_U1 = new Bytes('$3\r\nSET\r\n$2\r\nu1\r\n')
const GET_U1 = new Bytes('$3\r\nGET\r\n$2\r\nu1\r\n')
/** A SET's value after its position. */
const ONE = new Bytes('$1\r\n1\r\n')
/** The most bytes one bit operation takes: prefix, "$10\r\n", 10 digits, CRLF, value. */
const MAX_OP_BYTES = SET_U1.length + 5 + 10 + 2 + ONE.length
const MARKER_HEAD = new Bytes('$3\r\nGET\r\n$3\r\nu32\r\n')

/**
 * A `BITFIELD` (set) or `BITFIELD_RO` (test) on one shard key: first `GET u32 <markerOffset>`
 * (the shard's marker, so a missing key is detected in the same atomic command), then one
 * `SET u1 <p> 1` or `GET u1 <p>` per position of the listed keys. The reply is the marker followed
 * by one 0/1 per position (for SET: the bit's old value).
 *
 * @param positions The batch's positions; key `i`'s are `positions[i·hashes …]`.
 * @param keys Indexes of the keys to include, from `keys[from]` to `keys[to − 1]`.
 * @param skip Positions `p` of the batch to leave out where `skip[p]` is 1 (bits known to be set).
 */
export function bitfieldCommand(
  set: boolean,
  key: string,
  markerOffset: number,
  positions: Uint32Array,
  hashes: number,
  keys: Uint32Array,
  from: number,
  to: number,
  skip?: Uint8Array,
): Command {
  const name = set ? 'bitfield' : 'bitfield_ro'
  const keyBulk = bulkString(key)
  const bits = skip === undefined ? (to - from) * hashes : sentBits(skip, hashes, keys, from, to)
  const buffer = Buffer.allocUnsafe(bitfieldBytes(keyBulk, bits))
  const end = writeBitfield(buffer, viewOf(buffer), 0, set, keyBulk, markerOffset, positions, hashes, keys, from, to, skip)
  return new PreEncodedCommand(name, key, buffer.subarray(0, end))
}

/** The most bytes {@link writeBitfield} writes for `bits` bit operations on the key `keyBulk`, with its slack. */
export function bitfieldBytes(keyBulk: Bytes, bits: number): number {
  return 64 + keyBulk.length + 40 + bits * MAX_OP_BYTES + SLACK_BYTES
}

/**
 * Writes the RESP of {@link bitfieldCommand} at `buffer[at]` (`view` over the same bytes; room:
 * {@link bitfieldBytes}), the key given as a bulk string (with any key prefix); returns the end.
 * With `skip`, a position `p` of the batch whose `skip[p]` is 1 is left out (a bit already set).
 */
export function writeBitfield(
  buffer: Buffer,
  view: DataView,
  at: number,
  set: boolean,
  keyBulk: Bytes,
  markerOffset: number,
  positions: Uint32Array,
  hashes: number,
  keys: Uint32Array,
  from: number,
  to: number,
  skip?: Uint8Array,
): number {
  const name = set ? 'bitfield' : 'bitfield_ro'
  const bits = skip === undefined ? (to - from) * hashes : sentBits(skip, hashes, keys, from, to)
  at += buffer.write(`*${2 + 3 + bits * (set ? 4 : 3)}\r\n$${name.length}\r\n${name}\r\n`, at, 'latin1')
  at = keyBulk.put(view, at)
  at = MARKER_HEAD.put(view, at)
  at = putBulkNumber(view, buffer, at, markerOffset)
  const prefix = set ? SET_U1 : GET_U1
  for (let k = from; k < to; k++) {
    for (let p = keys[k] * hashes, end = p + hashes; p < end; p++) {
      if (skip !== undefined && skip[p] === 1) continue
      at = putBulkNumber(view, buffer, prefix.put(view, at), positions[p])
      if (set) at = ONE.put(view, at)
    }
  }
  return at
}

/** How many positions of keys `keys[from … to − 1]` {@link writeBitfield} sends with `skip`. */
export function sentBits(skip: Uint8Array, hashes: number, keys: Uint32Array, from: number, to: number): number {
  let bits = 0
  for (let k = from; k < to; k++) for (let p = keys[k] * hashes, end = p + hashes; p < end; p++) bits += 1 - skip[p]
  return bits
}

/**
 * Sends keys `keys[from … to − 1]` of the batch to `shard` in one BITFIELD (set) or BITFIELD_RO
 * (test) and writes their answers to `out`. While a rebuild runs (the live shard's marker is
 * flagged), an add is written to the next generation too before it is answered. An add to a live
 * shard of a filter with a feed appends the keys to the shard's feed in the same MULTI/EXEC.
 * @throws BloomError `BLOOM_DATA_LOST` when the shard key lacks its marker.
 */
export async function sendBitfield(
  shards: ShardGenerations,
  generation: Generation,
  set: boolean,
  shard: number,
  batch: PositionBatch,
  keys: Uint32Array,
  from: number,
  to: number,
  out: Uint8Array,
  copyIfFlagged: boolean,
): Promise<void> {
  const key = shards.key(shard, generation)
  const what = `${set ? 'add' : 'has'} on ${key}`
  const command = bitfieldCommand(set, shards.keyPrefix + key, shards.shardBytes * 8, batch.positions, batch.hashes, keys, from, to)
  // Integers, or strings of digits for a client with ioredis's stringNumbers option.
  let reply: Array<number | string>
  if (set && generation === 'live' && shards.feedLength > 0) {
    reply = await bitfieldWithFeed(shards, command, shard, addValue(batch, keys, from, to), what)
  } else {
    shards.client.sendCommand(command)
    reply = (await shards.call(command.promise, what)) as Array<number | string>
  }
  const marker = Number(reply[0])
  const flagged = marker === shards.marker + 1 && generation === 'live'
  if (marker !== shards.marker && !flagged) {
    // A write to a lost key just re-created it without a marker: remove that debris so it
    // does not hold memory (or outlive the filter's TTL); the error stands either way.
    if (set) await discardUnmarked(shards, key)
    throw dataLost(what)
  }
  const hashes = batch.hashes
  for (let k = from, r = 1; k < to; k++) {
    let result = set ? 0 : 1
    for (let end = r + hashes; r < end; r++) {
      if (Number(reply[r]) === 0) result = set ? 1 : 0
    }
    out[keys[k]] = result
  }
  if (flagged && set && copyIfFlagged) await copyToNext(shards, shard, batch, keys, from, to)
}

/**
 * `MULTI`, the BITFIELD `command`, `XADD` of `value` to the shard's feed, `EXEC`: the bits and
 * their feed entry in one atomic step (docs/SPEC.md 9.12). Resolves to the BITFIELD's reply.
 */
async function bitfieldWithFeed(shards: ShardGenerations, command: Command, shard: number, value: Buffer, what: string): Promise<Array<number | string>> {
  const transaction = shards.client.multi()
  // ioredis's Pipeline queues a Command object with sendCommand (as its own commands do), though
  // its type (ChainableCommander) does not declare it; ioredis 5 and 6 alike.
  ;(transaction as unknown as { sendCommand(command: Command): unknown }).sendCommand(command)
  transaction.call('xadd', shards.names.feed(shard), ...addArguments(shards.feedLength, value))
  const replies = await shards.call(transaction.exec(), what)
  if (replies === null) throw storeError(new Error('transaction aborted'), what)
  for (const [error] of replies) if (error) throw storeError(error, what)
  return replies[0][1] as Array<number | string>
}

/**
 * A rebuild is running (the live shard's marker is flagged): writes keys `keys[from … to − 1]`
 * to the next generation too, before their add is answered.
 */
export async function copyToNext(shards: ShardGenerations, shard: number, batch: PositionBatch, keys: Uint32Array, from: number, to: number): Promise<void> {
  const ignored = new Uint8Array(batch.size)
  try {
    await sendBitfield(shards, 'next', true, shard, batch, keys, from, to, ignored, false)
  } catch (error) {
    if (!(error instanceof BloomError && error.code === 'BLOOM_DATA_LOST')) throw error
    // The next generation is gone: swapped in since (so "live" is it now) or abandoned.
    await setLiveAndNext(shards, shard, batch, keys, from, to)
  }
}

/** Bit positions per script call of {@link setLiveAndNext} (whole keys only: a key's positions never span two calls). */
const POSITIONS_PER_SCRIPT = 8192

/**
 * Writes keys `keys[from … to − 1]` into the live key once more, and should a new rebuild have
 * flagged it meanwhile, into that rebuild's next key in the same step: a live write alone would
 * vanish at its swap (docs/SPEC.md 9.5).
 */
async function setLiveAndNext(shards: ShardGenerations, shard: number, batch: PositionBatch, keys: Uint32Array, from: number, to: number): Promise<void> {
  const { client, shardBytes, markerPlain, markerFlagged } = shards
  const keysPerCall = Math.max(1, Math.floor(POSITIONS_PER_SCRIPT / batch.hashes))
  const live = shards.key(shard, 'live')
  const what = `add on ${live}`
  const feedKey = shards.feedLength > 0 ? [shards.names.feed(shard)] : []
  for (let start = from; start < to; start += keysPerCall) {
    const end = Math.min(to, start + keysPerCall)
    const positions: number[] = []
    for (let k = start; k < end; k++) {
      for (let h = 0, at = keys[k] * batch.hashes; h < batch.hashes; h++) positions.push(batch.positions[at + h])
    }
    // A filter with a feed gets the keys' entry in the same script (docs/SPEC.md 9.12).
    const entry = feedKey.length > 0 ? [shards.feedLength, addValue(batch, keys, start, end)] : [0, '']
    const written = await shards.call(client.eval(SET_LIVE_AND_NEXT, 2 + feedKey.length, live, shards.key(shard, 'next'), ...feedKey, shardBytes, markerPlain, markerFlagged, ...entry, ...positions), what)
    if (Number(written) !== 1) throw dataLost(what)
  }
}

/** Deletes `key` if it lacks both markers (debris a write to a lost shard re-created). Best effort. */
export async function discardUnmarked(shards: ShardGenerations, key: string): Promise<void> {
  try {
    await shards.call(shards.client.eval(DISCARD_UNMARKED, 1, key, shards.shardBytes, shards.markerPlain, shards.markerFlagged), `discard ${key}`)
  } catch {
    // Best effort: the caller is about to raise BLOOM_DATA_LOST, which says what matters.
  }
}
