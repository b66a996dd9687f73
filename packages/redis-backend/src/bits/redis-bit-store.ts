import { BloomError, type FilterParameters } from '@bloomkit/core'
import { layeredBatch, type BitStore, type BitStoreCapabilities, type PositionBatch, type ShardGroup } from '@bloomkit/core/store'
import { groupByShard, packCalls, splitByBlock } from './batch-groups.js'
import { sendBitfield } from './client-bitfield.js'
import { allBitsInBlock, BLOCK_BYTES, readBlocks, refusedAcrossSlots, type BlockRead } from './block-read.js'
import { BatchConnections } from '../wire/batch-connection.js'
import { COALESCE_MAX_KEYS, Coalescer } from './coalesce.js'
import { DirectBatches, PARTIAL_MIN_SET_SHARE } from './direct-batch.js'
import { NO_CONNECTION, type BitOperation, type Part } from './parts.js'
import { resetValue } from '../layout/feed.js'
import { IO_CHUNK_BYTES, readInSteps, writeInSteps, type Generation, type ShardGenerations } from '../layout/shard-generations.js'
import { corkWrites, isCluster, masterOfSlot } from '../wire/client.js'
import { DEFAULT_STORE_SETTINGS, type StoreSettings } from '../options.js'
import { COUNT_SHARD, OR_SHARD, READ_SHARD, WRITE_SHARD } from './bit-scripts.js'
import { MAX_SCAN_BYTES, orWhole, readWhole } from './whole-shard.js'

/** Bytes per orShard script call; the OR loop runs in Lua, so it is kept short to bound the blocking. */
const OR_CHUNK_BYTES = 1 << 16
const { pairsAgree } = layeredBatch

/** After a Cluster node refused a block read spanning slots, how long to read shard by shard (ms). */
const ACROSS_SLOTS_RETRY_MS = 30_000

/**
 * The bits of a named filter in Redis (see {@link ShardGenerations} for the keys and markers).
 *
 * `setBits`/`testBits` send, per shard, one whole-shard read or OR when the batch has enough keys
 * there, else one `BITFIELD`/`BITFIELD_RO` per chunk of keys, all in flight at once; each begins
 * by reading the marker, so a missing shard is noticed by the same atomic command that would
 * otherwise have answered "absent", and raises `BLOOM_DATA_LOST`. Calls of a few keys made in the
 * same tick share their round trip.
 *
 * Made by `RedisBloomFilter`, which owns the parameters in Redis.
 */
export class RedisBitStore implements BitStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: true }
  readonly parameters: FilterParameters
  private readonly shards: ShardGenerations
  private readonly generation: Generation
  private readonly settings: StoreSettings
  private readonly keysPerCommand: number
  /** The fewest keys of a batch in one shard for which it reads or ORs the whole shard. */
  private readonly scanMinKeys: number
  private readonly coalesced: Record<BitOperation, Coalescer>
  /** Whether batches read keys' blocks (blocked layout, live shards, not switched off). */
  private readonly blockReads: boolean
  /** Standalone: one block read may span shards; Cluster: one per shard (each has its own slot). */
  private readonly crossShardCalls: boolean
  /**
   * Cluster: one block read per node spanning its shards' slots (a script flag of Redis ≥ 7.0).
   * After a node refuses one (a slot moved, or a Redis before 7.0), one per shard until this time.
   */
  private perShardUntil = 0
  /**
   * Whether an add first reads the keys' blocks and writes only keys not all present: worth it
   * when most keys of a batch are already present (de-duplication, re-loading), not on a first
   * fill. Follows the previous add batch: at least half of its keys present. Over the batch
   * connections of a standalone server, such an add also sends only the bits still missing, which
   * pays once enough of the bits met are set already (a filter filling up, see
   * {@link PARTIAL_MIN_SET_SHARE}): then that share of the previous batch's bits decides too.
   */
  private testFirst = true
  /** The batch paths over the client's batch connections (live store, unless switched off). */
  private readonly direct: DirectBatches | undefined
  /** Whether adds append their keys to the shards' feeds (a live store of a filter with a feed, docs/SPEC.md 9.12). */
  private readonly fed: boolean
  private closed = false
  /** What else closes with the store (a replica's follower). */
  private readonly closing: Array<() => void> = []

  /**
   * @param settings The store options, checked and resolved by the public method that opened the filter.
   * @param generation 'next' for the store a rebuild fills.
   */
  constructor(shards: ShardGenerations, settings: StoreSettings = DEFAULT_STORE_SETTINGS, generation: Generation = 'live') {
    this.shards = shards
    this.parameters = shards.parameters
    this.settings = settings
    this.generation = generation
    this.keysPerCommand = settings.keysPerCommand
    const { scanBytesPerKey } = settings
    this.scanMinKeys = scanBytesPerKey === 0 || shards.shardBytes + 4 > MAX_SCAN_BYTES ? Infinity : Math.ceil(shards.shardBytes / scanBytesPerKey)
    this.blockReads = generation === 'live' && shards.parameters.layout === 'blocked' && settings.blockReads
    this.fed = generation === 'live' && shards.feedLength > 0
    this.crossShardCalls = !isCluster(shards.client)
    this.direct = generation === 'live' && settings.batchConnection ? new DirectBatches(shards, BatchConnections.of(shards.client), this.keysPerCommand) : undefined
    const waitMs = settings.coalesceWait
    this.coalesced = { add: new Coalescer((batch, out) => this.run('add', batch, out), waitMs), has: new Coalescer((batch, out) => this.run('has', batch, out), waitMs) }
  }

  /** The store that writes the next generation's keys, as a rebuild does. */
  nextGeneration(): RedisBitStore {
    return new RedisBitStore(this.shards, this.settings, 'next')
  }

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    // A feed records the keys' hash pairs: a batch built without them would be recorded as other keys.
    if (this.fed && batch.size > 0 && !pairsAgree(this.parameters, batch, 0)) {
      return Promise.reject(
        new BloomError('BLOOM_INVALID_PARAMETER', "batch: its pairs must be the keys' hash pairs its positions came from (a filter with a feed records them; fill PositionBatch.pairs)"),
      )
    }
    return this.submit('add', batch, out)
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.submit('has', batch, out)
  }

  async countBits(): Promise<number[]> {
    this.checkOpen()
    await this.shards.verifyMeta('countBits')
    const counts = new Array<number>(this.parameters.shards).fill(0)
    await this.shards.forEachShard(async (shard) => {
      counts[shard] = Number(await this.shardScript(COUNT_SHARD, shard, [this.shards.shardBytes - 1], 'countBits'))
    })
    return counts
  }

  async readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    this.checkOpen()
    await this.shards.verifyMeta('readShard')
    const read = (at: number, end: number) => this.shardScript(READ_SHARD, shard, [offset + at, offset + end - 1], 'readShard') as Promise<Buffer>
    return readInSteps(length, read, `readShard ${this.shards.key(shard, this.generation)}`)
  }

  async writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    await writeInSteps(bytes, IO_CHUNK_BYTES, (at, piece) => this.shardScript(WRITE_SHARD, shard, [offset + at, piece], 'writeShard', { resetFeed: true }))
  }

  async orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    this.checkOpen()
    await writeInSteps(bytes, OR_CHUNK_BYTES, (at, piece) => this.shardScript(OR_SHARD, shard, [offset + at, piece], 'orShard', { resetFeed: true }))
  }

  /**
   * Unsets every bit: each shard is rebuilt empty as its next generation (in bounded steps) and
   * swapped in with one RENAME, so a reader sees the old shard or the empty one, never a half.
   */
  async clear(): Promise<void> {
    this.checkOpen()
    await this.shards.renewShards()
  }

  async close(): Promise<void> {
    // The client is the user's: closing a filter leaves the connection to its owner.
    this.closed = true
    for (const close of this.closing.splice(0)) close()
  }

  /** Runs `close` when the store closes (a replica's follower and its connection). */
  onClose(close: () => void): void {
    this.closing.push(close)
  }

  private submit(op: BitOperation, batch: PositionBatch, out: Uint8Array): Promise<void> {
    try {
      this.checkOpen()
    } catch (error) {
      return Promise.reject(error)
    }
    if (batch.size > COALESCE_MAX_KEYS) return this.run(op, batch, out)
    return this.coalesced[op].submit(batch, out)
  }

  /**
   * Per shard, one whole-shard read or OR if the batch has enough keys there; else, for the
   * blocked layout, block reads (one script per up to 256 keys); else one BITFIELD per chunk of
   * `keysPerCommand` keys. All in flight together.
   */
  private async run(op: BitOperation, batch: PositionBatch, out: Uint8Array): Promise<void> {
    if (this.direct !== undefined && (await this.runDirect(this.direct, op, batch, out))) return
    const uncork = corkWrites(this.shards.client)
    let commands: Promise<void>[]
    try {
      commands = this.send(op, batch, out)
    } finally {
      uncork()
    }
    // The meta is compared beside the batch's commands, and its verdict comes first.
    const settled = await Promise.allSettled([this.shards.verifyMeta(op), ...commands])
    for (const result of settled) if (result.status === 'rejected') throw result.reason
    if (op === 'add' && this.blockReads) {
      let present = 0
      for (let i = 0; i < batch.size; i++) present += 1 - out[i]
      this.testFirst = 2 * present >= batch.size
    }
  }

  /**
   * The batch over the batch connections: per node a few writes (whole-shard groups aside, which
   * go through the client as in {@link send}). False, having sent nothing, when a node's
   * connection is not open: the caller then takes the client's path.
   */
  private async runDirect(direct: DirectBatches, op: BitOperation, batch: PositionBatch, out: Uint8Array): Promise<boolean> {
    const set = op === 'add'
    const { shards, generation } = this
    const whole: ShardGroup[] = []
    const blocks: Part[] = []
    const perBit: Part[] = []
    const byBlock = this.blockReads && (!set || this.testFirst)
    for (const group of groupByShard(batch, this.parameters.shards)) {
      const { shard, keys } = group
      if (keys.length >= this.scanMinKeys) {
        whole.push(group)
      } else if (byBlock) {
        // Keys whose bits are not all in one block (never, for the blocked layout's positions) go per bit.
        const [inBlock, spread] = splitByBlock(batch, keys)
        if (inBlock.length > 0) blocks.push({ shard, keys: inBlock, from: 0, to: inBlock.length })
        if (spread.length > 0) perBit.push({ shard, keys: spread, from: 0, to: spread.length })
      } else {
        perBit.push({ shard, keys, from: 0, to: keys.length })
      }
    }
    // Nothing is sent before every node's connection is known to be open (else the client's path takes it all).
    direct.bitsSeen = direct.bitsSet = 0
    const jobs = await direct.send({ op, batch, blocks, perBit, out, partial: set && this.blockReads })
    if (jobs === NO_CONNECTION) return false
    const wholes = whole.map(({ shard, keys }) => (set ? orWhole(shards, generation, shard, batch, keys, out) : readWhole(shards, generation, shard, batch, keys, out)))
    // The meta's verdict comes first, as in run().
    const settled = await Promise.allSettled([...jobs.slice(0, 1), ...wholes, ...jobs.slice(1)])
    for (const result of settled) if (result.status === 'rejected') throw result.reason
    if (op === 'add' && this.blockReads) {
      let present = 0
      for (let i = 0; i < batch.size; i++) present += 1 - out[i]
      // Concurrent batches share the counts: a rough share is all this choice needs.
      const partly = this.crossShardCalls && direct.bitsSeen > 0 && direct.bitsSet >= PARTIAL_MIN_SET_SHARE * direct.bitsSeen
      this.testFirst = 2 * present >= batch.size || partly
    }
    return true
  }

  /** Issues the batch's commands (see {@link run}); what each resolves to is written to `out`. */
  private send(op: BitOperation, batch: PositionBatch, out: Uint8Array): Promise<void>[] {
    const set = op === 'add'
    const commands: Promise<void>[] = []
    const { shards, generation } = this
    const blockGroups: ShardGroup[] = []
    for (const group of batch.groupByShard()) {
      const { shard, keys } = group
      if (keys.length >= this.scanMinKeys) {
        commands.push(set ? orWhole(shards, generation, shard, batch, keys, out) : readWhole(shards, generation, shard, batch, keys, out))
        continue
      }
      let perBit = keys
      if (this.blockReads && (!set || this.testFirst)) {
        const [inBlock, spread] = splitByBlock(batch, keys)
        if (inBlock.length > 0) blockGroups.push({ shard, keys: inBlock })
        perBit = spread
      }
      for (let from = 0; from < perBit.length; from += this.keysPerCommand) {
        commands.push(sendBitfield(shards, op, batch, { shard, keys: perBit, from, to: Math.min(perBit.length, from + this.keysPerCommand) }, out, { generation }))
      }
    }
    if (set) commands.push(...this.addByBlockCalls(batch, this.blockCalls(blockGroups), out))
    else for (const call of this.blockCalls(blockGroups)) commands.push(this.testByBlocks(batch, call, out))
    return commands
  }

  /**
   * Splits groups into block-read calls ({@link packCalls}: 256 keys at most): any shards
   * together on a standalone server; on a Cluster the shards of one node together (or one shard
   * per call for a while after a node refused that, see {@link perShardUntil}).
   */
  private blockCalls(groups: ShardGroup[]): ShardGroup[][] {
    if (this.crossShardCalls) return packCalls(groups)
    const byNode = new Map<string, ShardGroup[]>()
    const bySlotMap = Date.now() >= this.perShardUntil
    for (const group of groups) {
      const slot = this.shards.names.slot(group.shard)
      const node = (bySlotMap ? masterOfSlot(this.shards.client, slot) : undefined) ?? `slot ${slot}`
      const list = byNode.get(node)
      if (list === undefined) byNode.set(node, [group])
      else list.push(group)
    }
    return [...byNode.values()].flatMap(packCalls)
  }

  /** Reads the groups' blocks; a call spanning slots that a node refuses is read shard by shard. */
  private async read(batch: PositionBatch, groups: ShardGroup[], what: string): Promise<BlockRead> {
    const spansSlots = !this.crossShardCalls && groups.some((group) => this.shards.names.slot(group.shard) !== this.shards.names.slot(groups[0].shard))
    if (!spansSlots) return readBlocks(this.shards, batch, groups, what)
    try {
      return await readBlocks(this.shards, batch, groups, what, { acrossSlots: true })
    } catch (error) {
      if (!refusedAcrossSlots(error)) throw error
      this.perShardUntil = Date.now() + ACROSS_SLOTS_RETRY_MS
      const parts = await Promise.all(groups.map((group) => readBlocks(this.shards, batch, [group], what)))
      return { flagged: Uint8Array.from(parts.map((part) => part.flagged[0])), blocks: Buffer.concat(parts.map((part) => part.blocks)) }
    }
  }

  private async testByBlocks(batch: PositionBatch, groups: ShardGroup[], out: Uint8Array): Promise<void> {
    const { blocks } = await this.read(batch, groups, `has on ${this.shards.key(groups[0].shard, 'live')}`)
    const { positions, hashes } = batch
    let at = 0
    for (const { keys } of groups) {
      for (let k = 0; k < keys.length; k++, at += BLOCK_BYTES) out[keys[k]] = allBitsInBlock(blocks, at, positions, hashes, keys[k]) ? 1 : 0
    }
  }

  /**
   * Reads the keys' blocks; a key whose bits are all set is not new (bits are only ever set, so
   * that answer stays true), and only the others are written, by BITFIELD, which says exactly
   * which were new. A shard whose marker is flagged gets all its keys written, so that a running
   * rebuild's next generation receives them.
   */
  private addByBlockCalls(batch: PositionBatch, calls: ShardGroup[][], out: Uint8Array): Promise<void>[] {
    // The reads all go out at once, but each call's writes are sent only after the previous call's
    // were: a shard's keys may span calls, and a key twice in one batch must be written (and said
    // to be new) in input order, as on every other path. A call answered sooner (another node, or a
    // read retried shard by shard) would otherwise write its duplicate first.
    let previousSent: Promise<unknown> = Promise.resolve()
    return calls.map((groups) => {
      const read = this.read(batch, groups, `add on ${this.shards.key(groups[0].shard, 'live')}`)
      const sent = Promise.all([read, previousSent]).then(([result]) => this.addByBlocks(batch, groups, result, out))
      // The next call waits for these writes to be sent, not answered; a failure surfaces through `sent`.
      previousSent = sent.then((writes) => writes, () => undefined)
      return sent.then((writes) => writes.done)
    })
  }

  private addByBlocks(batch: PositionBatch, groups: ShardGroup[], read: BlockRead, out: Uint8Array): { done: Promise<void> } {
    const { flagged, blocks } = read
    const writes: Promise<void>[] = []
    const uncork = corkWrites(this.shards.client)
    try {
      this.writeMissing(batch, groups, flagged, blocks, out, writes)
    } finally {
      uncork()
    }
    return { done: Promise.all(writes).then(() => undefined) }
  }

  private writeMissing(batch: PositionBatch, groups: ShardGroup[], flagged: Uint8Array, blocks: Buffer, out: Uint8Array, writes: Promise<void>[]): void {
    const { positions, hashes } = batch
    let at = 0
    for (let g = 0; g < groups.length; g++) {
      const { shard, keys } = groups[g]
      const missing = new Uint32Array(keys.length)
      let count = 0
      for (let k = 0; k < keys.length; k++, at += BLOCK_BYTES) {
        if (flagged[g] === 0 && allBitsInBlock(blocks, at, positions, hashes, keys[k])) out[keys[k]] = 0
        else missing[count++] = keys[k]
      }
      for (let from = 0; from < count; from += this.keysPerCommand) {
        writes.push(sendBitfield(this.shards, 'add', batch, { shard, keys: missing, from, to: Math.min(count, from + this.keysPerCommand) }, out))
      }
    }
  }

  /**
   * Runs a shard script (scripts.ts) on `shard`'s key. With `resetFeed`, a live shard of a filter
   * with a feed has its feed reset in the same script (bits changed in place, not by adds).
   */
  private shardScript(script: string, shard: number, args: Array<number | Buffer>, what: string, { resetFeed = false } = {}): Promise<unknown> {
    const { shardBytes, markerPlain } = this.shards
    const key = this.shards.key(shard, this.generation)
    const all = [shardBytes, markerPlain, this.shards.otherMarker(this.generation), ...args]
    const keys = resetFeed && this.fed ? [key, this.shards.names.feed(shard)] : [key]
    if (keys.length === 2) all.push(this.shards.feedLength, resetValue())
    return this.shards.script(script, [keys.length, ...keys, ...all], `${what} on ${key}`)
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the store is closed')
  }
}
