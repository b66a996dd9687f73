// The replies of the BITFIELD commands a batch connection sent (direct-batch.ts), read in place.
import type { BloomError } from '@bloomkit/core'
import type { PositionBatch } from '@bloomkit/core/store'
import { lineInteger, replyEnd, errorText, isRedirected, next } from '../wire/resp-reader.js'
import { copyToNext, discardUnmarked, sendBitfield, sentBits } from './bitfield-command.js'
import type { Part } from './direct-parts.js'
import { dataLost, storeError } from '../errors.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { FED_REPLIES } from './feed-commands.js'

/**
 * Reads the replies of BITFIELD (`set`) or BITFIELD_RO commands, one per part of `commands`, from
 * `data` at `at`: `out[key]` as {@link sendBitfield} gives it. `skip`: positions left out of the
 * commands (see `writeBitfield`); they have no reply. A shard being rebuilt (flagged marker) gets
 * its added keys copied to the next generation; commands the node redirected are sent again
 * through the client. Full adds count their positions, and those set already, in `tally` (what
 * decides whether adds send only missing bits). With `fed`, each command was sent in a
 * MULTI/EXEC with its feed entry (feed-commands.ts): its replies are read inside EXEC's, and an
 * XADD that failed fails the add.
 */
export async function readBitfieldReplies(
  shards: ShardGenerations,
  data: Buffer,
  at: number,
  set: boolean,
  batch: PositionBatch,
  commands: readonly Part[],
  out: Uint8Array,
  skip: Uint8Array | undefined,
  tally: { bitsSeen: number; bitsSet: number },
  fed = false,
): Promise<void> {
  const { hashes } = batch
  const followUps: Array<Promise<void>> = []
  let lost: BloomError | undefined
  let feedError: Error | undefined
  for (const { shard, keys, from, to } of commands) {
    const what = () => `${set ? 'add' : 'has'} on ${shards.key(shard, 'live')}`
    // MULTI's +OK and the two +QUEUED, or the error queueing met; then EXEC's array, unless it aborted.
    let refused: string | undefined
    let ran = true
    if (fed) {
      for (let i = 0; i < FED_REPLIES - 1; i++, at = next(data, at)) if (data[at] === 0x2d) refused ??= errorText(data, at)
      ran = data[at] === 0x2a && data[at + 1] !== 0x2d
      if (!ran) refused ??= data[at] === 0x2d ? errorText(data, at) : 'transaction aborted'
      at = next(data, at)
    }
    if (ran && data[at] === 0x2d) {
      refused = errorText(data, at)
      at = next(data, at)
      if (fed) at = replyEnd(data, at)
    }
    if (refused !== undefined) {
      if (!isRedirected(refused)) throw storeError(new Error(refused), what())
      followUps.push(sendBitfield(shards, 'live', set, shard, batch, keys, from, to, out, true))
      continue
    }
    at = next(data, at)
    const marker = lineInteger(data, at)
    at = next(data, at)
    const flagged = marker === shards.marker + 1
    if (marker !== shards.marker && !flagged) {
      lost ??= dataLost(what())
      // A write to a lost key just re-created it without a marker: remove that debris.
      if (set) followUps.push(discardUnmarked(shards, shards.key(shard, 'live')))
      at += (skip === undefined ? (to - from) * hashes : sentBits(skip, hashes, keys, from, to)) * 4
      if (fed) at = replyEnd(data, at)
      continue
    }
    // Each bit's reply is `:0\r\n` or `:1\r\n` (its old value): 4 bytes, the digit second.
    if (skip === undefined) {
      let ones = 0
      for (let k = from; k < to; k++) {
        let any = 0
        let all = 1
        for (let h = 0; h < hashes; h++, at += 4) {
          const bit = data[at + 1] - 0x30
          any |= bit ^ 1
          all &= bit
          ones += bit
        }
        out[keys[k]] = set ? any : all
      }
      if (set) {
        tally.bitsSeen += (to - from) * hashes
        tally.bitsSet += ones
      }
    } else {
      // Only the missing bits were sent: the key is new if one of them still was.
      for (let k = from; k < to; k++) {
        let any = 0
        for (let p = keys[k] * hashes, end = p + hashes; p < end; p++) {
          if (skip[p] === 1) continue
          any |= (data[at + 1] - 0x30) ^ 1
          at += 4
        }
        out[keys[k]] = any
      }
    }
    if (fed) {
      // The XADD's reply: the entry's ID, nil when the feed is gone (NOMKSTREAM), or an error.
      if (data[at] === 0x2d) feedError ??= storeError(new Error(errorText(data, at)), what())
      at = replyEnd(data, at)
    }
    if (flagged && set) followUps.push(copyToNext(shards, shard, batch, keys, from, to))
  }
  const settled = await Promise.allSettled(followUps)
  if (lost !== undefined) throw lost
  if (feedError !== undefined) throw feedError
  for (const result of settled) if (result.status === 'rejected') throw result.reason
}
