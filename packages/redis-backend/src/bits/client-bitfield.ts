// What goes through the client's own connection for one shard's keys: a BITFIELD (the client path,
// and every path's fallback), and the one place that sends the follow-ups any path's replies call
// for (followUp): keys a node redirected, sent again; a lost shard's debris, deleted; the adds to a
// shard a rebuild has flagged, copied into its next generation.
import { BloomError } from '@bloomkit/core'
import type { PositionBatch } from '@bloomkit/core/store'
import type { Command } from 'ioredis'
import { dataLost, storeError } from '../errors.js'
import { addArguments, addValue } from '../layout/feed.js'
import type { Generation, ShardGenerations } from '../layout/shard-generations.js'
import { DISCARD_UNMARKED, SET_LIVE_AND_NEXT } from './bit-scripts.js'
import { bitfieldCommand } from './bitfield-command.js'
import type { BitOperation, Part } from './parts.js'

/**
 * What a batch's replies call for besides their answers, as a reply reader finds it: it only reads
 * and returns this, and {@link followUp} sends what it asks for.
 */
export interface Verdict {
  /** Parts a node redirected (MOVED, ASK, TRYAGAIN, …): sent again through the client, which follows redirects. */
  readonly redirected: Part[]
  /** Parts added to a live shard whose marker is flagged (a rebuild runs): copied into its next generation. */
  readonly flagged: Part[]
  /** Shard keys an add found without their marker: the write re-created them, and the debris is deleted. */
  readonly lostKeys: string[]
  /** What the replies said went wrong, most telling first (a lost shard, a failed feed entry): raised once the follow-ups are done. */
  readonly errors: unknown[]
}

/** A verdict with nothing to do yet. */
export function emptyVerdict(): Verdict {
  return { redirected: [], flagged: [], lostKeys: [], errors: [] }
}

/**
 * Sends what `verdict` calls for, all at once, and waits for all of it: redirected parts `op` again
 * (answers into `out`), lost keys' debris deleted, flagged parts copied. Then raises the verdict's
 * first error, or else the first follow-up's.
 */
export async function followUp(shards: ShardGenerations, op: BitOperation, batch: PositionBatch, verdict: Verdict, out: Uint8Array): Promise<void> {
  const { redirected, flagged, lostKeys, errors } = verdict
  const sent = [
    ...redirected.map((part) => sendBitfield(shards, op, batch, part, out)),
    ...(op === 'add' ? lostKeys.map((key) => discardUnmarked(shards, key)) : []),
    ...(op === 'add' ? flagged.map((part) => copyToNext(shards, batch, part)) : []),
  ]
  const settled = sent.length === 0 ? [] : await Promise.allSettled(sent)
  if (errors.length > 0) throw errors[0]
  for (const result of settled) if (result.status === 'rejected') throw result.reason
}

/** Where {@link sendBitfield} sends. */
export interface SendOptions {
  /** The shard keys written: the live ones, or the next generation a rebuild fills. Default: `live`. */
  readonly generation?: Generation
}

/**
 * Sends the keys of `part` to its shard in one BITFIELD (add) or BITFIELD_RO (has) and writes their
 * answers to `out`. While a rebuild runs (the live shard's marker is flagged), an add is written
 * to the next generation too before it is answered. An add to a live shard of a filter with a feed
 * appends the keys to the shard's feed in the same MULTI/EXEC.
 * @throws BloomError `BLOOM_DATA_LOST` when the shard key lacks its marker.
 */
export async function sendBitfield(shards: ShardGenerations, op: BitOperation, batch: PositionBatch, part: Part, out: Uint8Array, { generation = 'live' }: SendOptions = {}): Promise<void> {
  const { shard, keys, from, to } = part
  const key = shards.key(shard, generation)
  const what = `${op} on ${key}`
  const set = op === 'add'
  const command = bitfieldCommand(shards.keyPrefix + key, { op, markerOffset: shards.shardBytes * 8, positions: batch.positions, hashes: batch.hashes, keys, from, to })
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
    return followUp(shards, op, batch, { ...emptyVerdict(), lostKeys: [key], errors: [dataLost(what)] }, out)
  }
  const hashes = batch.hashes
  for (let k = from, r = 1; k < to; k++) {
    let result = set ? 0 : 1
    for (let end = r + hashes; r < end; r++) {
      if (Number(reply[r]) === 0) result = set ? 1 : 0
    }
    out[keys[k]] = result
  }
  if (flagged && set) await followUp(shards, op, batch, { ...emptyVerdict(), flagged: [part] }, out)
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
 * A rebuild is running (the live shard's marker is flagged): writes the keys of `part` to the next
 * generation too, before their add is answered.
 */
async function copyToNext(shards: ShardGenerations, batch: PositionBatch, part: Part): Promise<void> {
  const ignored = new Uint8Array(batch.size)
  try {
    await sendBitfield(shards, 'add', batch, part, ignored, { generation: 'next' })
  } catch (error) {
    if (!(error instanceof BloomError && error.code === 'BLOOM_DATA_LOST')) throw error
    // The next generation is gone: swapped in since (so "live" is it now) or abandoned.
    await setLiveAndNext(shards, batch, part)
  }
}

/** Bit positions per script call of {@link setLiveAndNext} (whole keys only: a key's positions never span two calls). */
const POSITIONS_PER_SCRIPT = 8192

/**
 * Writes the keys of `part` into the live key once more, and should a new rebuild have flagged it
 * meanwhile, into that rebuild's next key in the same step: a live write alone would vanish at its
 * swap (docs/SPEC.md 9.5).
 */
async function setLiveAndNext(shards: ShardGenerations, batch: PositionBatch, { shard, keys, from, to }: Part): Promise<void> {
  const { shardBytes, markerPlain, markerFlagged } = shards
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
    const written = await shards.script(SET_LIVE_AND_NEXT, [2 + feedKey.length, live, shards.key(shard, 'next'), ...feedKey, shardBytes, markerPlain, markerFlagged, ...entry, ...positions], what)
    if (Number(written) !== 1) throw dataLost(what)
  }
}

/** Deletes `key` if it lacks both markers (debris a write to a lost shard re-created). Best effort. */
export async function discardUnmarked(shards: ShardGenerations, key: string): Promise<void> {
  try {
    await shards.script(DISCARD_UNMARKED, [1, key, shards.shardBytes, shards.markerPlain, shards.markerFlagged], `discard ${key}`)
  } catch {
    // Best effort: the caller is about to raise BLOOM_DATA_LOST, which says what matters.
  }
}
