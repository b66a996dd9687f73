// The replies of the block reads a batch connection sent (direct-batch.ts), read in place: per
// part its shard's marker, then one 64-byte block per key, inside MULTI/EXEC's reply or not.
import type { PositionBatch } from '@bloomkit/core/store'
import { lineInteger, errorText, isRedirected, next } from '../wire/resp-reader.js'
import { allBitsInBlock, BLOCK_BYTES, markBitsInBlock } from './block-read.js'
import type { Part } from './parts.js'
import { dataLost, storeError } from '../errors.js'
import type { ShardGenerations } from '../layout/shard-generations.js'

/** How the block reads whose replies {@link readBlockReplies} reads were sent. */
export interface BlockReplies {
  readonly batch: PositionBatch
  /** Per part its shard's marker, then one block per key. */
  readonly parts: Part[]
  /** `shard`: each part in a MULTI/EXEC of its own (a Cluster: a transaction stays in one slot); `all`: one for all the parts. */
  readonly transactions: 'shard' | 'all'
  /** Gets `flagged[i]` = 1 for part i when its shard's marker is the flagged one. */
  readonly flagged?: Uint8Array
  /** A read without MULTI/EXEC (a guarded add sending only missing bits): gets a 1 for each position already set. */
  readonly mask?: Uint8Array
}

/** Where {@link testParts} reads and what it fills in. */
interface Reading {
  readonly shards: ShardGenerations
  readonly data: Buffer
  readonly read: BlockReplies
  readonly out: Uint8Array
  readonly tally: { bitsSeen: number; bitsSet: number }
}

/**
 * Reads the replies at `at` of block reads (`DirectBatches.readBlocks`) and tests the blocks:
 * `out[key]` 1 when all its bits are set; with `mask`, also counts the positions seen and set in
 * `tally`. Sends nothing: returns the indexes of the parts a node redirected, for the caller to
 * send again through the client (their keys are not "found").
 */
export function readBlockReplies(shards: ShardGenerations, data: Buffer, at: number, read: BlockReplies, out: Uint8Array, tally: { bitsSeen: number; bitsSet: number }): number[] {
  const { parts } = read
  const reading: Reading = { shards, data, read, out, tally }
  const redirected: number[] = []
  if (read.mask !== undefined) {
    testParts(reading, at, 0, parts.length)
    return redirected
  }
  for (let first = 0; first < parts.length; ) {
    const last = read.transactions === 'shard' ? first + 1 : parts.length
    const what = () => `has on ${shards.key(parts[first].shard, 'live')}`
    // MULTI's +OK and each command's +QUEUED, or the error that queueing it met.
    let error: string | undefined
    let queued = 1
    for (let p = first; p < last; p++) queued += parts[p].to - parts[p].from + 1
    for (let i = 0; i < queued; i++) {
      if (data[at] === 0x2d) error ??= errorText(data, at)
      at = next(data, at)
    }
    if (data[at] !== 0x2a || data[at + 1] === 0x2d) {
      // EXECABORT (a command was refused) or a nil reply: nothing ran.
      const text = error ?? (data[at] === 0x2d ? errorText(data, at) : 'transaction aborted')
      if (!isRedirected(text)) throw storeError(new Error(text), what())
      for (let p = first; p < last; p++) redirected.push(p)
      at = next(data, at)
      first = last
      continue
    }
    at = testParts(reading, next(data, at), first, last)
    first = last
  }
  return redirected
}

/** Tests the blocks of `parts[first … last)` from their replies at `at` (each part's marker, then its blocks); returns their end. */
function testParts({ shards, data, read, out, tally }: Reading, at: number, first: number, last: number): number {
  const { batch, parts, flagged, mask } = read
  const { positions, hashes } = batch
  const { markerPlain, markerFlagged } = shards
  for (let p = first; p < last; p++) {
    const what = () => `has on ${shards.key(parts[p].shard, 'live')}`
    const { keys, from, to } = parts[p]
    // The marker: `$4\r\n` and 4 bytes, or fewer bytes for a key that is gone or short.
    if (data[at] === 0x2d) throw storeError(new Error(errorText(data, at)), what())
    const length = lineInteger(data, at)
    at = next(data, at)
    const isPlain = length === 4 && data[at] === markerPlain[0] && data[at + 1] === markerPlain[1] && data[at + 2] === markerPlain[2] && data[at + 3] === markerPlain[3]
    const isFlagged = length === 4 && data[at] === markerFlagged[0] && data[at + 1] === markerFlagged[1] && data[at + 2] === markerFlagged[2] && data[at + 3] === markerFlagged[3]
    if (!isPlain && !isFlagged) throw dataLost(what())
    if (flagged !== undefined) flagged[p] = isPlain ? 0 : 1
    at += length + 2
    for (let k = from; k < to; k++) {
      if (data[at] === 0x2d) throw storeError(new Error(errorText(data, at)), what())
      if (lineInteger(data, at) !== BLOCK_BYTES) throw dataLost(what())
      at = next(data, at)
      if (mask === undefined) {
        out[keys[k]] = allBitsInBlock(data, at, positions, hashes, keys[k]) ? 1 : 0
      } else {
        out[keys[k]] = markBitsInBlock(data, at, positions, hashes, keys[k], mask) ? 1 : 0
        tally.bitsSeen += hashes
        for (let i = keys[k] * hashes, end = i + hashes; i < end; i++) tally.bitsSet += mask[i]
      }
      at += BLOCK_BYTES + 2
    }
  }
  return at
}
