// A filter's feed (store format 2, docs/SPEC.md 9.12): per shard a Redis Stream in the shard's
// slot. Every add that sets bits in a live shard appends the hash pairs of its keys in the same
// atomic step (MULTI/EXEC or script); every replacement of the shard resets it in the script that
// RENAMEs the shard. A replica loads the bits once and then follows the entries. Here: the format
// of an entry, the arguments and RESP of its XADD, and the Lua that resets a feed.
import { BloomError } from '@bloomkit/core'
import type { PositionBatch } from '@bloomkit/core/store'
import { Bytes } from '../wire/resp-writer.js'

/** The store format of a filter with a feed (`format` in its meta); 1 is a filter without. */
export const FEED_STORE_FORMAT = 2
/** Entries each shard's feed keeps at least (`XADD … MAXLEN ~`), unless `feedLength` says otherwise. */
export const DEFAULT_FEED_LENGTH = 1024
/** The largest `feedLength`. */
export const MAX_FEED_LENGTH = 2 ** 31 - 1
/** The field of an add's entry: a tag, then each key's hash pair. */
export const ADD_FIELD = 'h'
/** The field of a reset's entry, the first of a feed (the shard was replaced): a tag. */
export const RESET_FIELD = 'r'
/**
 * Random bytes at the head of every entry's value. Stream IDs are a millisecond time and a
 * sequence number, which a stream created again (a reset, a feed evicted) or a master promoted
 * after losing writes (its clock behind) may hand out once more; a replica compares the tag of
 * the entry it stands on, so an ID reused for another entry is never taken for its own.
 */
export const TAG_BYTES = 8
/** Bytes per key in an add's entry: `a`, then `b`, each an unsigned 32-bit little-endian number. */
export const PAIR_BYTES = 8

/** Random bytes handed out 8 at a time: one system call per 512 entries. */
const tagPool = new Uint8Array(4096)
let tagAt = tagPool.length

/** Writes a fresh random tag at `target[at]`; returns the end. */
export function putTag(target: Uint8Array, at: number): number {
  if (tagAt + TAG_BYTES > tagPool.length) {
    crypto.getRandomValues(tagPool)
    tagAt = 0
  }
  for (let i = 0; i < TAG_BYTES; i++) target[at + i] = tagPool[tagAt + i]
  tagAt += TAG_BYTES
  return at + TAG_BYTES
}

/** A reset entry's value: a fresh tag. */
export function resetValue(): Buffer {
  const value = Buffer.allocUnsafe(TAG_BYTES)
  putTag(value, 0)
  return value
}

/** Bytes of an add entry's value for `keys` keys. */
export function addValueBytes(keys: number): number {
  return TAG_BYTES + keys * PAIR_BYTES
}

/**
 * Writes the value of an add's entry for keys `keys[from … to − 1]` of `batch` at `target[at]`
 * (room: {@link addValueBytes}): a fresh tag, then each key's `a` and `b`, little-endian. Returns the end.
 */
export function putAddValue(target: Uint8Array, view: DataView, at: number, batch: PositionBatch, keys: Uint32Array, from: number, to: number): number {
  at = putTag(target, at)
  const pairs = batch.pairs
  for (let k = from; k < to; k++, at += PAIR_BYTES) {
    const key = keys[k]
    view.setUint32(at, pairs[2 * key], true)
    view.setUint32(at + 4, pairs[2 * key + 1], true)
  }
  return at
}

/** The value of an add's entry for keys `keys[from … to − 1]` of `batch`, as a Buffer of its own. */
export function addValue(batch: PositionBatch, keys: Uint32Array, from: number, to: number): Buffer {
  const value = Buffer.allocUnsafe(addValueBytes(to - from))
  putAddValue(value, new DataView(value.buffer, value.byteOffset, value.length), 0, batch, keys, from, to)
  return value
}

/**
 * The arguments of an add's XADD after the feed's key: a feed that is gone is not made again
 * (`NOMKSTREAM`: only a reset creates one, so a replica whose position went with it sees so),
 * trimmed to about `feedLength` entries.
 */
export function addArguments(feedLength: number, value: Buffer): Array<string | Buffer> {
  return ['NOMKSTREAM', 'MAXLEN', '~', String(feedLength), '*', ADD_FIELD, value]
}

/**
 * The RESP of an add's XADD up to its value: `XADD <feed> NOMKSTREAM MAXLEN ~ <feedLength> * h`,
 * for a feed key given as a RESP bulk string (with any key prefix). The value follows as a bulk
 * string: `$<bytes>\r\n`, {@link putAddValue}, `\r\n`.
 */
export function addCommandHead(feedBulk: string, feedLength: number): Bytes {
  const length = String(feedLength)
  return new Bytes(`*9\r\n$4\r\nXADD\r\n${feedBulk}$10\r\nNOMKSTREAM\r\n$6\r\nMAXLEN\r\n$1\r\n~\r\n$${length.length}\r\n${length}\r\n$1\r\n*\r\n$1\r\n${ADD_FIELD}\r\n`)
}

/**
 * Lua: `resetFeed(feed, shard, feedLength, tag)` empties the feed and starts it again with one
 * reset entry, with the TTL the shard has: what a script that replaces (or overwrites) a shard
 * runs in the same step, so that no replica's position survives the bits it was taken on.
 */
export const RESET_FEED_LUA = `
local function resetFeed(feed, shard, feedLength, tag)
  redis.call('DEL', feed)
  redis.call('XADD', feed, 'MAXLEN', '~', feedLength, '*', '${RESET_FIELD}', tag)
  local ttl = redis.call('PTTL', shard)
  if ttl > 0 then redis.call('PEXPIRE', feed, ttl) end
end
`

/** One entry of a feed, decoded (docs/SPEC.md 9.12). */
export interface FeedEntry {
  /** The stream entry ID, `<ms>-<seq>`. */
  readonly id: string
  /** `add`: keys were added (`pairs`); `reset`: the shard was replaced, and its feed starts here. */
  readonly kind: 'add' | 'reset'
  /** The entry's random tag (8 bytes). */
  readonly tag: Uint8Array
  /** Each key's `a` at [2i] and `b` at [2i + 1] (unsigned); empty for a reset. */
  readonly pairs: Uint32Array
}

/**
 * Decodes an entry as XRANGE returns it (its ID and its flat [field, value] list).
 * @throws BloomError `BLOOM_CORRUPT_STORE` for an entry no writer of this format writes.
 */
export function decodeFeedEntry(id: string, fields: ReadonlyArray<string | Uint8Array>): FeedEntry {
  const corrupt = (why: string) => new BloomError('BLOOM_CORRUPT_STORE', `feed entry ${id} ${why} (docs/SPEC.md 9.12)`)
  if (fields.length !== 2) throw corrupt(`has ${fields.length / 2} fields, not one`)
  const field = Buffer.from(fields[0] as Uint8Array | string).toString('latin1')
  const value = fields[1]
  // Values are bytes: a reply decoded as UTF-8 text (XRANGE rather than its Buffer form) has lost them.
  if (typeof value === 'string') throw new TypeError(`feed entry ${id}: read feeds as Buffers (xrangeBuffer), not as text`)
  if (field !== ADD_FIELD && field !== RESET_FIELD) throw corrupt(`has the field ${JSON.stringify(field)}, neither "${ADD_FIELD}" nor "${RESET_FIELD}"`)
  if (field === RESET_FIELD ? value.length !== TAG_BYTES : value.length < TAG_BYTES || (value.length - TAG_BYTES) % PAIR_BYTES !== 0) {
    throw corrupt(`holds ${value.length} bytes`)
  }
  const view = new DataView(value.buffer, value.byteOffset, value.length)
  const pairs = new Uint32Array(((value.length - TAG_BYTES) / PAIR_BYTES) * 2)
  for (let i = 0; i < pairs.length; i++) pairs[i] = view.getUint32(TAG_BYTES + 4 * i, true)
  return { id, kind: field === ADD_FIELD ? 'add' : 'reset', tag: Uint8Array.from(value.subarray(0, TAG_BYTES)), pairs }
}
