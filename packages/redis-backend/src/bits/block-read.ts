// The blocked layout keeps all of a key's bits in one 64-byte block of its shard. A batch is
// answered by one script that returns the keys' blocks packed in one string (and each shard's
// marker state, checked once per shard), and the client tests the bits itself: one Lua GETRANGE
// per key on the server instead of a BITFIELD operation per bit, and on the client one Buffer per
// call instead of one JS value per bit.
import { createHash } from 'node:crypto'
import { TEST_BITS, testBitSetBit, testOrSetKey, type PositionBatch, type ShardGroup } from '@bloomkit/core/store'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { READ_BLOCKS, READ_BLOCKS_ACROSS_SLOTS } from './bit-scripts.js'
import { runScript } from '../wire/script.js'

/** Bytes per block of the blocked layout (a cache line; 512 bits). */
const BLOCK_BYTES = 64
const SCRIPTS = {
  perSlot: { body: READ_BLOCKS, sha: createHash('sha1').update(READ_BLOCKS).digest('hex') },
  acrossSlots: { body: READ_BLOCKS_ACROSS_SLOTS, sha: createHash('sha1').update(READ_BLOCKS_ACROSS_SLOTS).digest('hex') },
}

/** What one block read returns: per shard of the request, whether its marker is flagged, and the blocks. */
export interface BlockRead {
  /** 1 where the shard's marker is the flagged one (a rebuild is copying writes), else 0; per group. */
  readonly flagged: Uint8Array
  /** The keys' blocks, 64 bytes each, in the order of the groups and their keys. */
  readonly blocks: Buffer
}

/** How {@link readBlocks} reads. */
export interface BlockReadOptions {
  /** On a Cluster, the groups' shards share a node but not a slot: the script of Redis ≥ 7.0 that may span slots. Default: false. */
  readonly acrossSlots?: boolean
}

/**
 * Reads the blocks of the keys in `groups` (live shards) with one script call. On a Cluster the
 * groups' shards share a slot, or (`acrossSlots`, Redis ≥ 7.0) at least a node.
 * @throws BloomError `BLOOM_DATA_LOST` when a shard lacks its marker, as any other call.
 */
export async function readBlocks(shards: ShardGenerations, batch: PositionBatch, groups: readonly ShardGroup[], what: string, { acrossSlots = false }: BlockReadOptions = {}): Promise<BlockRead> {
  const { positions, hashes } = batch
  const keys = groups.map((group) => shards.names.shard(group.shard))
  const requests: Buffer[] = []
  let total = 0
  for (const { keys } of groups) {
    const request = Buffer.allocUnsafe(keys.length * 4)
    for (let k = 0; k < keys.length; k++) {
      // The block's byte offset: its first bit's position, rounded down to 512 bits, over 8.
      const offset = (positions[keys[k] * hashes] >>> 9) << 6
      request[4 * k] = offset >>> 24
      request[4 * k + 1] = (offset >>> 16) & 0xff
      request[4 * k + 2] = (offset >>> 8) & 0xff
      request[4 * k + 3] = offset & 0xff
    }
    requests.push(request)
    total += keys.length
  }
  const markers = [shards.shardBytes, shards.markerPlain, shards.markerFlagged]
  let reply: unknown
  if (acrossSlots) {
    // Only KEYS[1] is declared (ioredis routes by it, and adds the key prefix to it): the others
    // travel as arguments, prefixed here.
    const prefix = shards.keyPrefix
    reply = await runScript(shards.client, SCRIPTS.acrossSlots, [1, keys[0], ...markers, groups.length, ...keys.map((key) => prefix + key), ...requests], shards.timeout, what)
  } else {
    reply = await runScript(shards.client, SCRIPTS.perSlot, [groups.length, ...keys, ...markers, ...requests], shards.timeout, what)
  }
  if (!Buffer.isBuffer(reply) || reply.length !== groups.length + total * BLOCK_BYTES) {
    throw new Error(`${what}: the block read returned ${Buffer.isBuffer(reply) ? reply.length : typeof reply} bytes, expected ${groups.length + total * BLOCK_BYTES}`)
  }
  const flagged = new Uint8Array(groups.length)
  for (let g = 0; g < groups.length; g++) flagged[g] = reply[g] === 0x31 ? 1 : 0
  return { flagged, blocks: reply.subarray(groups.length) }
}

/**
 * Whether a failed cross-slot block read was refused for where its keys are (a slot that moved,
 * a server before Redis 7.0 without script flags), so that reading shard by shard will work.
 */
export function refusedAcrossSlots(error: unknown): boolean {
  return /non local key|same slot|CROSSSLOT|MOVED|ASK|shebang|unexpected symbol|flags/i.test(String((error as Error)?.message))
}

/**
 * Whether every bit of key `key` is set in its block, which starts at `blocks[at]`: core's kernel,
 * with the block placed where the shard's byte ⌊p / 8⌋ of the key's first position falls.
 */
export function allBitsInBlock(blocks: Uint8Array, at: number, positions: Uint32Array, hashes: number, key: number): boolean {
  const from = key * hashes
  return testOrSetKey(blocks, at - ((positions[from] >>> 9) << 6), positions, from, hashes, TEST_BITS) === 1
}

/**
 * {@link allBitsInBlock}, also writing each of the key's positions' bit to `mask` (1: set), at
 * the position's index in the batch: an add then sends only the bits still missing.
 */
export function markBitsInBlock(blocks: Uint8Array, at: number, positions: Uint32Array, hashes: number, key: number, mask: Uint8Array): boolean {
  const from = key * hashes
  const base = at - ((positions[from] >>> 9) << 6)
  let all = 1
  for (let p = from, end = from + hashes; p < end; p++) {
    const bit = testBitSetBit(blocks, base, positions[p], TEST_BITS)
    mask[p] = bit
    all &= bit
  }
  return all === 1
}

export { BLOCK_BYTES }
