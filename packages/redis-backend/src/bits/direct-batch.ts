// A batch over the batch connections (batch-connection.ts): per node a few writes of RESP encoded
// here, their replies read in place. Checks read each key's 64-byte block with a plain GETRANGE
// (blocked layout) or its bits with BITFIELD_RO; adds set bits with BITFIELD. A shard's marker is
// read in the same atomic step as its bits: a GETRANGE of it inside the MULTI/EXEC that reads the
// blocks (per chunk of keys on a standalone server; per shard on a Cluster, where a transaction
// stays in one slot), or BITFIELD's leading `GET u32`; an add sending only missing bits reads
// them without MULTI/EXEC, its guard standing in for the transaction (see DirectBatches.send).
import type { PositionBatch } from '@bloomkit/core/store'
import { bitfieldBytes, writeBitfield } from './bitfield-command.js'
import { emptyVerdict, followUp, sendBitfield } from './client-bitfield.js'
import { bulkString, bulkText, Bytes, EXEC, MULTI, putBulkNumber, SLACK_BYTES, viewOf } from '../wire/resp-writer.js'
import { readBitfieldReplies } from './bitfield-replies.js'
import { readBlockReplies } from './block-replies.js'
import { BLOCK_BYTES } from './block-read.js'
import type { BatchConnection, BatchConnections, Replies } from '../wire/batch-connection.js'
import { FeedCommands, FED_REPLIES } from './feed-commands.js'
import { NO_CONNECTION, type Part, chunksOf } from './parts.js'
import type { BitfieldSending, BlockReading, DirectBatch, Guard, ReadingFirst, RequestOptions } from './direct-calls.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { slotOf } from '../layout/key-names.js'
import { CHECKED_FIELDS } from '../layout/meta.js'
import { hmgetValues } from '../wire/resp-reader.js'

const GETRANGE = new Bytes('*4\r\n$8\r\nGETRANGE\r\n')
/** The most bytes of a GETRANGE besides its key: the command and two numbers. */
const GETRANGE_BYTES = GETRANGE.length + 2 * 17
/**
 * Keys per request (one write, its replies read together). A node's requests go out one after
 * another, so Redis works on the first while the client encodes the next, and the client reads
 * one's replies while Redis works on the next.
 */
const CHUNK_KEYS = 256
/**
 * Keys per request of an add sending only missing bits: its read must come back before its write
 * leaves, so each request pair costs both sides a round of writes, wake-ups and reply parsing,
 * while fewer, larger chunks leave the client and Redis waiting on each other. With 1000-key
 * batches, 512 was the best or next to it both on a busy machine (where 256 lost ~10 % of the
 * batch's time) and on a quieter one (where 1024 lost ~10 %); see benchmarks/README.md.
 */
const PARTIAL_CHUNK_KEYS = 512
/** Request buffers kept for reuse, per client (shared by its filters and their layers). */
const SPARE_BUFFERS = 8

/**
 * An add sends only the bits its read found missing while, of the positions its previous batches
 * met, at least this share were set already: below it, reading the blocks first costs more than the
 * bits it saves (a block read costs about two bit operations of a BITFIELD, on both sides).
 */
export const PARTIAL_MIN_SET_SHARE = 0.4

/** A request buffer and a view over it. */
interface Scratch {
  readonly buffer: Buffer
  readonly view: DataView
}

/** The batch paths over {@link BatchConnections}, for one filter's live shards. */
export class DirectBatches {
  private readonly shards: ShardGenerations
  private readonly connections: BatchConnections
  private readonly keysPerCommand: number
  /** Per shard: its key as a RESP bulk string (key prefix included), made on first use. */
  private readonly keyBulks: Array<Bytes | undefined>
  private readonly markerOffset: number
  /** `HMGET <meta> <checked fields>`, sent with a batch's first request to the meta's node. */
  private readonly metaCommand: Bytes
  private readonly metaSlot: number
  /** `HMGET <meta> state generation`: what an add sending only missing bits checks before and after (see {@link send}). */
  private readonly guardCommand: Bytes
  /** For a filter with a feed: what wraps each add's BITFIELD into a transaction with its feed entry. */
  private readonly feed: FeedCommands | undefined
  /** Positions of recent add batches, and how many of them were set already (what {@link PARTIAL_MIN_SET_SHARE} is compared with). */
  bitsSeen = 0
  bitsSet = 0

  constructor(shards: ShardGenerations, connections: BatchConnections, keysPerCommand: number) {
    this.shards = shards
    this.connections = connections
    this.keysPerCommand = keysPerCommand
    this.keyBulks = new Array<Bytes | undefined>(shards.parameters.shards)
    this.markerOffset = shards.shardBytes
    const meta = shards.keyPrefix + shards.names.meta
    this.metaSlot = slotOf(meta)
    this.metaCommand = new Bytes(`*${2 + CHECKED_FIELDS.length}\r\n$5\r\nHMGET\r\n${bulkText(meta)}${CHECKED_FIELDS.map(bulkText).join('')}`)
    this.guardCommand = new Bytes(`*4\r\n$5\r\nHMGET\r\n${bulkText(meta)}${bulkText('state')}${bulkText('generation')}`)
    this.feed = shards.feedLength > 0 ? new FeedCommands(shards) : undefined
  }

  /**
   * Sends a batch's groups: `blocks` read by block (checks, and adds reading first with
   * `set`), `perBit` by BITFIELD (adds) or BITFIELD_RO (checks); the meta's checked fields are
   * compared too. Resolves to the promises of the requests (the meta's verdict first), or to
   * {@link NO_CONNECTION}, having sent nothing, when a node's connection is not open.
   *
   * With `partial` (an add, on a standalone server), the writes after the block reads set only
   * the bits the reads found missing. That is exact while the shard read is the shard written:
   * bits are only ever set, so a bit read as set is still set, and BITFIELD's old values of the
   * others say whether the key was new, as when all k are sent. A shard key is only ever replaced
   * (RENAME of a next generation: rebuild, import, clear) under the meta's lock, and a rebuild or
   * import counts a generation when it unlocks; so the meta's state and generation are read
   * before the reads and after the writes, on the same connection (Redis runs its commands in
   * order), and if the filter was not `ready` with the same generation at both, every key written
   * partly is written again in full (and copied to a next generation being filled). A clear in
   * between is not seen: the key's bits then land partly in the cleared shard, as if the add had
   * come just before the clear, which a clear racing an add may always do.
   *
   * The guard also makes MULTI/EXEC around those reads needless (Redis's cost for each queued
   * command is a copy of its arguments and a `+QUEUED` reply): with `ready` and the same generation
   * at both, no shard key was replaced in between (a clear aside, as above) and no marker was
   * flagged (a rebuild flags only while locked, and one that locked and unlocked in between
   * without a swap left the live shard as it was), so marker and blocks are of one shard. When the
   * guard fails, the marker read may be older than the blocks (a rebuild flagging it in between),
   * so the keys the read found present, which were not written, are written in full too.
   */
  async send({ op, batch, blocks, perBit, out, partial = false }: DirectBatch): Promise<Array<Promise<void>> | typeof NO_CONNECTION> {
    const set = op === 'add'
    const nodes = new Map<string, { blocks: Part[]; perBit: Part[] }>()
    for (const [list, kind] of [
      [blocks, 'blocks'],
      [perBit, 'perBit'],
    ] as const) {
      for (const part of list) {
        const node = this.connections.nodeOf(this.shards.names.slot(part.shard))
        if (node === undefined) return NO_CONNECTION
        let work = nodes.get(node)
        if (work === undefined) nodes.set(node, (work = { blocks: [], perBit: [] }))
        work[kind].push(part)
      }
    }
    const connections = new Map<string, BatchConnection>()
    for (const node of nodes.keys()) {
      const connection = await this.connections.get(node)
      if (connection === undefined || !connection.alive) return NO_CONNECTION
      connections.set(node, connection)
    }
    const metaNode = this.connections.nodeOf(this.metaSlot)
    let meta: Promise<void> | undefined
    const jobs: Array<Promise<void>> = []
    for (const [node, work] of nodes) {
      const connection = connections.get(node)!
      let previous: Promise<unknown> = Promise.resolve()
      // Sending only missing bits: one node (standalone), so the meta's guard shares the blocks' connection.
      const guarded = set && partial && !this.connections.cluster && work.blocks.length > 0
      // The guard and the reads leave in one write.
      const uncork = guarded ? connection.cork() : undefined
      const guard: Guard | undefined = guarded ? { before: this.guard(connection), mask: new Uint8Array(batch.size * batch.hashes), partly: [] } : undefined
      const chunkJobs: Array<Promise<void>> = []
      let after: Promise<string | undefined> | undefined
      const chunks = chunksOf(work.blocks, guarded ? PARTIAL_CHUNK_KEYS : CHUNK_KEYS)
      for (let c = 0; c < chunks.length; c++) {
        const chunk = chunks[c]
        const withMeta = meta === undefined && node === metaNode
        let job: Promise<void>
        if (!set) {
          job = this.readBlocks(connection, { batch, parts: chunk }, out, { withMeta })
        } else {
          // A chunk's writes leave after the previous chunk's were sent: a key twice in a batch
          // (same shard, maybe another chunk) must be written, and said new, in input order.
          // The guard after (see above) leaves with the last chunk's writes: Redis runs it after them.
          const sent = this.addReadingFirst(connection, { batch, parts: chunk, out, previous, guard, guardAfter: guarded && c === chunks.length - 1 }, { withMeta })
          previous = sent.then(
            (done) => done,
            () => undefined,
          )
          if (guarded && c === chunks.length - 1) after = sent.then((done) => done.after)
          job = sent.then((done) => done.done)
        }
        chunkJobs.push(job)
        if (withMeta) meta = job
        else jobs.push(job)
      }
      uncork?.()
      if (guard !== undefined) {
        jobs.push(Promise.all([guard.before, after, Promise.all(chunkJobs)]).then(([was, is]) => (was !== undefined && is === was ? undefined : this.rewrite(batch, guard.partly, out))))
      }
      for (const chunk of chunksOf(work.perBit, CHUNK_KEYS)) {
        const withMeta = meta === undefined && node === metaNode
        const job = this.bitfields(connection, { op, batch, parts: chunk }, out, { withMeta })
        if (withMeta) meta = job
        else jobs.push(job)
      }
    }
    jobs.unshift(meta ?? this.shards.verifyMeta(op))
    return jobs
  }

  private keyBulk(shard: number): Bytes {
    let bulk = this.keyBulks[shard]
    if (bulk === undefined) {
      this.keyBulks[shard] = bulk = bulkString(this.shards.keyPrefix + this.shards.key(shard, 'live'))
    }
    return bulk
  }

  /** A request buffer of at least `size` bytes (plus the writers' slack). */
  private take(size: number): Scratch {
    size += SLACK_BYTES
    const spare = this.connections.spare
    for (let i = spare.length - 1; i >= 0; i--) {
      if (spare[i].buffer.length >= size) return spare.splice(i, 1)[0]
    }
    const buffer = Buffer.allocUnsafeSlow(Math.max(size, 1 << 16))
    return { buffer, view: viewOf(buffer) }
  }

  /** Writes `scratch.buffer[0 … end)` as one request; the buffer is reused once written. */
  private request(connection: BatchConnection, scratch: Scratch, end: number, replies: number, what: string): Promise<Replies> {
    return connection.request(scratch.buffer.subarray(0, end), replies, this.shards.timeout, what, () => {
      if (this.connections.spare.length < SPARE_BUFFERS) this.connections.spare.push(scratch)
    })
  }

  /** The meta's stored values from an HMGET reply at `at`, checked; returns the reply's end. */
  private checkMeta(data: Buffer, at: number, what: string): number {
    const { values, end } = hmgetValues(data, at, what)
    this.shards.checkMeta(values, what)
    return end
  }

  /**
   * Reads the blocks of the keys of `parts` (blocked layout) and tests them: `out[key]` 1 when all
   * its bits are set. With `flagged`, sets `flagged[i]` for part i when its shard's marker is the
   * flagged one (or the node redirected it). Parts the node redirected are checked through the
   * client (BITFIELD_RO). With `mask` (a guarded add, see {@link send}), read without MULTI/EXEC,
   * and `mask` gets a 1 for each position already set.
   */
  async readBlocks(connection: BatchConnection, { batch, parts, flagged, mask }: BlockReading, out: Uint8Array, { withMeta }: RequestOptions): Promise<void> {
    const perShard = this.connections.cluster
    // A guarded partial add (`mask`, see {@link send}) reads without MULTI/EXEC: its guard proves what the transaction would.
    const atomic = mask === undefined
    let size = 2 * (MULTI.length + EXEC.length) + (withMeta ? this.metaCommand.length : 0)
    for (const { shard, from, to } of parts) size += (to - from + 1) * (GETRANGE_BYTES + this.keyBulk(shard).length) + (perShard ? MULTI.length + EXEC.length : 0)
    const scratch = this.take(size)
    const { buffer, view } = scratch
    const { positions, hashes } = batch
    let at = withMeta ? this.metaCommand.put(view, 0) : 0
    let replies = withMeta ? 1 : 0
    const marker = this.markerOffset
    for (let p = 0; p < parts.length; p++) {
      const { shard, keys, from, to } = parts[p]
      const keyBulk = this.keyBulk(shard)
      if (!atomic) {
        replies += to - from + 1 // the marker and each block
      } else if (p === 0 || perShard) {
        at = MULTI.put(view, at)
        replies += 2 // +OK, and EXEC's reply
      }
      at = keyBulk.put(view, GETRANGE.put(view, at))
      at = putBulkNumber(view, buffer, putBulkNumber(view, buffer, at, marker), marker + 3)
      for (let k = from; k < to; k++) {
        const offset = (positions[keys[k] * hashes] >>> 9) << 6
        at = keyBulk.put(view, GETRANGE.put(view, at))
        at = putBulkNumber(view, buffer, putBulkNumber(view, buffer, at, offset), offset + BLOCK_BYTES - 1)
      }
      if (!atomic) continue
      replies += to - from + 1 // +QUEUED each
      if (p === parts.length - 1 || perShard) at = EXEC.put(view, at)
    }
    const what = `has on ${this.shards.key(parts[0].shard, 'live')}`
    const reply = await this.request(connection, scratch, at, replies, what)
    const start = withMeta ? this.checkMeta(reply.data, reply.start, 'has') : reply.start
    const redirected = readBlockReplies(this.shards, reply.data, start, { batch, parts, transactions: perShard ? 'shard' : 'all', flagged, mask }, out, this)
    if (redirected.length === 0) return
    if (flagged !== undefined) for (const p of redirected) flagged[p] = 1
    await followUp(this.shards, 'has', batch, { ...emptyVerdict(), redirected: redirected.map((p) => parts[p]) }, out)
  }

  /**
   * An add that reads the keys' blocks first: keys whose bits are all set are not new (bits are
   * only ever set), and only the others are written, with BITFIELD, which says exactly which were
   * new. A shard being rebuilt (flagged marker) gets all its keys written. Resolves once the
   * writes are sent (after `previous`), to their completion.
   *
   * With a `guard` (see {@link send}), the read also fills its `mask` (1 for each position already
   * set), and if the meta's guard allows it, a plain shard's keys are written with only their
   * missing bits; those parts are listed in its `partly`.
   */
  private async addReadingFirst(
    connection: BatchConnection,
    { batch, parts, out, previous, guard, guardAfter = false }: ReadingFirst,
    { withMeta }: RequestOptions,
  ): Promise<{ done: Promise<void>; after?: Promise<string | undefined> }> {
    const found = new Uint8Array(batch.size)
    const flagged = new Uint8Array(parts.length)
    const mask = guard?.mask
    await this.readBlocks(connection, { batch, parts, flagged, mask }, found, { withMeta })
    // Sent before the reads, so it has arrived; undefined: the filter was locked (or no guard).
    const ready = guard !== undefined && (await guard.before) !== undefined
    const writes: Part[] = []
    const partWrites: Part[] = []
    for (let p = 0; p < parts.length; p++) {
      const { shard, keys, from, to } = parts[p]
      // Missing keys from the front, keys found present from the back.
      const missing = new Uint32Array(to - from)
      let count = 0
      let present = missing.length
      for (let k = from; k < to; k++) {
        if (flagged[p] === 0 && found[keys[k]] === 1) {
          out[keys[k]] = 0
          missing[--present] = keys[k]
        } else {
          missing[count++] = keys[k]
        }
      }
      // Read without MULTI, a plain marker may be older than the blocks read after it (a rebuild
      // flagging it in between): if the guard fails, the keys found present are written too.
      if (mask !== undefined && present < missing.length) guard?.partly.push({ shard, keys: missing, from: present, to: missing.length })
      if (count === 0) continue
      const part = { shard, keys: missing, from: 0, to: count }
      if (ready && flagged[p] === 0) partWrites.push(part)
      else writes.push(part)
    }
    guard?.partly.push(...partWrites)
    await previous
    const uncork = guardAfter ? connection.cork() : undefined
    const done = [this.bitfields(connection, { op: 'add', batch, parts: writes }, out, { withMeta: false })]
    if (partWrites.length > 0) done.push(this.bitfields(connection, { op: 'add', batch, parts: partWrites, skip: mask }, out, { withMeta: false }))
    const after = guardAfter ? this.guard(connection) : undefined
    uncork?.()
    return { done: Promise.all(done).then(() => undefined), after }
  }

  /** `HMGET <meta> state generation` on `connection`: "ready <generation>", or undefined when not ready. */
  private async guard(connection: BatchConnection): Promise<string | undefined> {
    const scratch = this.take(this.guardCommand.length)
    const end = this.guardCommand.put(scratch.view, 0)
    const reply = await this.request(connection, scratch, end, 1, 'add')
    const [state, generation] = hmgetValues(reply.data, reply.start, 'add').values
    return state === 'ready' ? `ready ${generation}` : undefined
  }

  /**
   * Writes the keys of `parts` again with all their bits, through the client (a full BITFIELD,
   * copied to a next generation while one is filled): their partial write may have met a shard
   * swapped in after their read. A key is new if either write says so.
   */
  private async rewrite(batch: PositionBatch, parts: Part[], out: Uint8Array): Promise<void> {
    const again = new Uint8Array(batch.size)
    await Promise.all(
      parts.flatMap(({ shard, keys, from, to }) => {
        const calls: Array<Promise<void>> = []
        for (let start = from; start < to; start += this.keysPerCommand) {
          calls.push(sendBitfield(this.shards, 'add', batch, { shard, keys, from: start, to: Math.min(to, start + this.keysPerCommand) }, again))
        }
        return calls
      }),
    )
    for (const { keys, from, to } of parts) for (let k = from; k < to; k++) out[keys[k]] |= again[keys[k]]
  }

  /**
   * BITFIELD (add) or BITFIELD_RO (has) on the keys of `parts`, at most `keysPerCommand` keys per
   * command, in one request; `out[key]` as `sendBitfield` gives it. What the replies call for
   * (client-bitfield.ts's `followUp`): a shard being rebuilt (flagged marker) gets its added keys
   * copied to the next generation; commands the node redirected are sent again through the
   * client. A filter with a feed has each add's BITFIELD sent in a MULTI/EXEC with its feed entry
   * (all the command's keys, also those `skip` leaves out).
   */
  bitfields(connection: BatchConnection, { op, batch, parts, skip }: BitfieldSending, out: Uint8Array, { withMeta }: RequestOptions): Promise<void> {
    const commands: Part[] = []
    const feed = op === 'add' ? this.feed : undefined
    let size = withMeta ? this.metaCommand.length : 0
    for (const { shard, keys, from, to } of parts) {
      for (let start = from; start < to; start += this.keysPerCommand) {
        const end = Math.min(to, start + this.keysPerCommand)
        commands.push({ shard, keys, from: start, to: end })
        size += bitfieldBytes(this.keyBulk(shard), (end - start) * batch.hashes) + (feed === undefined ? 0 : feed.bytes(shard, end - start))
      }
    }
    if (commands.length === 0 && !withMeta) return Promise.resolve()
    const scratch = this.take(size)
    const { buffer, view } = scratch
    const { positions, hashes } = batch
    const markerOffset = this.markerOffset * 8
    let at = withMeta ? this.metaCommand.put(view, 0) : 0
    for (const { shard, keys, from, to } of commands) {
      if (feed !== undefined) at = feed.putMulti(view, at)
      at = writeBitfield(buffer, view, at, { op, keyBulk: this.keyBulk(shard), markerOffset, positions, hashes, keys, from, to, skip })
      if (feed !== undefined) at = feed.putEntryAndExec(buffer, view, at, shard, batch, keys, from, to)
    }
    const replies = commands.length * (feed === undefined ? 1 : FED_REPLIES) + (withMeta ? 1 : 0)
    return this.request(connection, scratch, at, replies, op).then((reply) => {
      const start = withMeta ? this.checkMeta(reply.data, reply.start, op) : reply.start
      const verdict = readBitfieldReplies(this.shards, reply.data, start, { op, batch, commands, skip, fed: feed !== undefined }, out, this)
      return followUp(this.shards, op, batch, verdict, out)
    })
  }
}
