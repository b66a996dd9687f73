// A BITFIELD's RESP, written by us: the encoding only (what sends it: client-bitfield.ts over the
// client's connection, direct-batch.ts over a batch connection).
import type { Command } from 'ioredis'
import { PreEncodedCommand } from '../wire/pre-encoded-command.js'
import { bulkString, Bytes, putBulkNumber, SLACK_BYTES, viewOf } from '../wire/resp-writer.js'
import type { BitOperation } from './parts.js'

/** Each bit's operation before its position: `SET u1 ` or `GET u1 `. */
const SET_U1 = new Bytes('$3\r\nSET\r\n$2\r\nu1\r\n')
const GET_U1 = new Bytes('$3\r\nGET\r\n$2\r\nu1\r\n')
/** A SET's value after its position. */
const ONE = new Bytes('$1\r\n1\r\n')
/** The most bytes one bit operation takes: prefix, "$10\r\n", 10 digits, CRLF, value. */
const MAX_OP_BYTES = SET_U1.length + 5 + 10 + 2 + ONE.length
const MARKER_HEAD = new Bytes('$3\r\nGET\r\n$3\r\nu32\r\n')

/**
 * One `BITFIELD` (add) or `BITFIELD_RO` (has) on one shard key: first `GET u32 <markerOffset>`
 * (the shard's marker, so a missing key is detected in the same atomic command), then one
 * `SET u1 <p> 1` or `GET u1 <p>` per position of the listed keys. The reply is the marker followed
 * by one 0/1 per position (for SET: the bit's old value).
 */
export interface BitfieldCall {
  readonly op: BitOperation
  /** The marker's bit offset in the key. */
  readonly markerOffset: number
  /** The batch's positions; key `i`'s are `positions[i·hashes …]`. */
  readonly positions: Uint32Array
  readonly hashes: number
  /** Indexes of the keys to include, from `keys[from]` to `keys[to − 1]`. */
  readonly keys: Uint32Array
  readonly from: number
  readonly to: number
  /** Positions `p` of the batch to leave out where `skip[p]` is 1 (bits known to be set). */
  readonly skip?: Uint8Array
}

/** {@link BitfieldCall} as one ioredis command on `key` (with any key prefix), encoded by {@link writeBitfield}. */
export function bitfieldCommand(key: string, call: BitfieldCall): Command {
  const keyBulk = bulkString(key)
  const buffer = Buffer.allocUnsafe(bitfieldBytes(keyBulk, call.skip === undefined ? (call.to - call.from) * call.hashes : sentBits(call.skip, call.hashes, call.keys, call.from, call.to)))
  const end = writeBitfield(buffer, viewOf(buffer), 0, { ...call, keyBulk })
  return new PreEncodedCommand(commandName(call.op), key, buffer.subarray(0, end))
}

function commandName(op: BitOperation): string {
  return op === 'add' ? 'bitfield' : 'bitfield_ro'
}

/** The most bytes {@link writeBitfield} writes for `bits` bit operations on the key `keyBulk`, with its slack. */
export function bitfieldBytes(keyBulk: Bytes, bits: number): number {
  return 64 + keyBulk.length + 40 + bits * MAX_OP_BYTES + SLACK_BYTES
}

/** What {@link writeBitfield} writes: a {@link BitfieldCall} on a key given as a RESP bulk string. */
export interface EncodedBitfieldCall extends BitfieldCall {
  /** The shard key (with any key prefix) as a RESP bulk string. */
  readonly keyBulk: Bytes
}

/**
 * Writes the RESP of `call` at `buffer[at]` (`view` over the same bytes; room:
 * {@link bitfieldBytes}); returns the end.
 */
export function writeBitfield(buffer: Buffer, view: DataView, at: number, call: EncodedBitfieldCall): number {
  const { op, keyBulk, markerOffset, positions, hashes, keys, from, to, skip } = call
  const name = commandName(op)
  const set = op === 'add'
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
