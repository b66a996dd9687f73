// The feed's half of an add over a batch connection (direct-batch.ts): each BITFIELD into a live
// shard of a filter with a feed is sent as `MULTI`, the BITFIELD, `XADD <feed> … h <pairs>`,
// `EXEC`, so that its bits and its feed entry are one atomic step (docs/SPEC.md 9.12). Its four
// replies are read by bitfield-replies.ts.
import type { PositionBatch } from '@bloomkit/core/store'
import { bulkText, Bytes, EXEC, MULTI } from '../wire/resp-writer.js'
import { addCommandHead, addValueBytes, putAddValue } from '../layout/feed.js'
import type { ShardGenerations } from '../layout/shard-generations.js'

/** Replies of one fed BITFIELD: MULTI's `+OK`, two `+QUEUED`, and EXEC's array of the BITFIELD's and the XADD's replies. */
export const FED_REPLIES = 4

/** The RESP around the BITFIELDs of one filter's adds to its live shards' feeds. */
export class FeedCommands {
  private readonly shards: ShardGenerations
  /** Per shard: `XADD <feed> NOMKSTREAM MAXLEN ~ <n> * h` (key prefix included), made on first use. */
  private readonly heads: Array<Bytes | undefined>

  constructor(shards: ShardGenerations) {
    this.shards = shards
    this.heads = new Array<Bytes | undefined>(shards.parameters.shards)
  }

  /** The most bytes {@link putMulti} and {@link putEntryAndExec} write around a BITFIELD of `keys` keys to `shard`. */
  bytes(shard: number, keys: number): number {
    return MULTI.length + this.head(shard).length + 16 + addValueBytes(keys) + 2 + EXEC.length
  }

  /** Writes `MULTI` at `at`; returns the end. */
  putMulti(view: DataView, at: number): number {
    return MULTI.put(view, at)
  }

  /**
   * Writes, after the BITFIELD of keys `keys[from … to − 1]` to `shard`, the XADD of their entry
   * and `EXEC`; returns the end.
   */
  putEntryAndExec(buffer: Buffer, view: DataView, at: number, shard: number, batch: PositionBatch, keys: Uint32Array, from: number, to: number): number {
    at = this.head(shard).put(view, at)
    at += buffer.write(`$${addValueBytes(to - from)}\r\n`, at, 'latin1')
    at = putAddValue(buffer, view, at, batch, keys, from, to)
    view.setUint16(at, 0x0a0d, true)
    return EXEC.put(view, at + 2)
  }

  private head(shard: number): Bytes {
    let head = this.heads[shard]
    if (head === undefined) {
      const { shards } = this
      this.heads[shard] = head = addCommandHead(bulkText(shards.keyPrefix + shards.names.feed(shard)), shards.feedLength)
    }
    return head
  }
}
