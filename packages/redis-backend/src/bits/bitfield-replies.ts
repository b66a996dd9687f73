// The replies of the BITFIELD commands a batch connection sent (direct-batch.ts), read in place.
import type { BloomError } from '@bloomkit/core'
import type { PositionBatch } from '@bloomkit/core/store'
import { lineInteger, replyEnd, errorText, isRedirected, next } from '../wire/resp-reader.js'
import { sentBits } from './bitfield-command.js'
import { emptyVerdict, type Verdict } from './client-bitfield.js'
import type { BitOperation, Part } from './parts.js'
import { dataLost, storeError } from '../errors.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { FED_REPLIES } from './feed-commands.js'

/** How the BITFIELDs whose replies {@link readBitfieldReplies} reads were sent. */
export interface BitfieldReplies {
  readonly op: BitOperation
  readonly batch: PositionBatch
  /** One command per part, in the order sent. */
  readonly commands: readonly Part[]
  /** Positions left out of the commands (see `writeBitfield`); they have no reply. */
  readonly skip?: Uint8Array
  /** Each command was sent in a MULTI/EXEC with its feed entry (feed-commands.ts). */
  readonly fed?: boolean
}

/**
 * Reads the replies of BITFIELD (add) or BITFIELD_RO (has) commands, one per part of `commands`,
 * from `data` at `at`: `out[key]` as `sendBitfield` gives it. Full adds count their positions, and
 * those set already, in `tally` (what decides whether adds send only missing bits). Sends nothing:
 * returns what the replies call for (client-bitfield.ts's `followUp` sends it): commands a node
 * redirected, shards a rebuild flagged (their added keys copied to the next generation), lost
 * shards (their debris deleted, `BLOOM_DATA_LOST`), and a feed entry that failed (which fails the add).
 */
export function readBitfieldReplies(
  shards: ShardGenerations,
  data: Buffer,
  at: number,
  { op, batch, commands, skip, fed = false }: BitfieldReplies,
  out: Uint8Array,
  tally: { bitsSeen: number; bitsSet: number },
): Verdict {
  const set = op === 'add'
  const { hashes } = batch
  const verdict = emptyVerdict()
  let lost: BloomError | undefined
  let feedError: Error | undefined
  for (const { shard, keys, from, to } of commands) {
    const what = () => `${op} on ${shards.key(shard, 'live')}`
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
      verdict.redirected.push({ shard, keys, from, to })
      continue
    }
    at = next(data, at)
    const marker = lineInteger(data, at)
    at = next(data, at)
    const flagged = marker === shards.marker + 1
    if (marker !== shards.marker && !flagged) {
      lost ??= dataLost(what())
      // A write to a lost key just re-created it without a marker: remove that debris.
      if (set) verdict.lostKeys.push(shards.key(shard, 'live'))
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
    if (flagged && set) verdict.flagged.push({ shard, keys, from, to })
  }
  if (lost !== undefined) verdict.errors.push(lost)
  if (feedError !== undefined) verdict.errors.push(feedError)
  return verdict
}
