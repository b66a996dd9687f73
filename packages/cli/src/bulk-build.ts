import type { FilterParameters } from '@bloomkit/core'
import { positionsOf, shardOf, xxh32PairBytes } from '@bloomkit/core/spec'
import { counterShardBytesOf, crc32, KeyHasher, PositionBatch, shardBitsOf, shardBytesOf, snapshotFormat } from '@bloomkit/core/store'
import { MemoryBitStore } from '@bloomkit/memory-backend'
import { MemoryCounterStore } from '@bloomkit/memory-backend/counting'
import { fillStats } from './filter-stats.js'
import type { KeyBlock } from './input.js'

const { encodeCountingHeader, encodeSnapshotHeader } = snapshotFormat

/** The largest group of shards held at once: one typed array stays well inside V8's limits. */
const MAX_GROUP_BYTES = 2 ** 31
/** Bytes per snapshot chunk handed on (the size `exportChunks` and the imports work in). */
const CHUNK_BYTES = 1 << 20
/** Keys placed per call into the memory store. */
const BATCH_KEYS = 16_384

/** Shards `first … first + count − 1`, built together in one pass over the input. */
export interface ShardRange {
  readonly first: number
  readonly count: number
}

/** Whether a filter is a counting one (4-bit counters for bits, docs/SPEC.md section 10). Default: false. */
export interface Counting {
  readonly counting?: boolean
}

/** Bytes a shard takes in memory and in the snapshot: its bits, or a counting filter's 4-bit counters. */
function shardSizeOf(parameters: FilterParameters, { counting = false }: Counting): number {
  return counting ? counterShardBytesOf(parameters) : shardBytesOf(parameters)
}

/**
 * Splits the shards into groups of at most `memoryBytes` (and 2 GiB) of bits (or counters); a
 * group holds at least one shard, whatever the budget.
 */
export function planShardGroups(parameters: FilterParameters, memoryBytes: number, counting: Counting = {}): ShardRange[] {
  const perGroup = Math.max(1, Math.floor(Math.min(memoryBytes, MAX_GROUP_BYTES) / shardSizeOf(parameters, counting)))
  const groups: ShardRange[] = []
  for (let first = 0; first < parameters.shards; first += perGroup) {
    groups.push({ first, count: Math.min(perGroup, parameters.shards - first) })
  }
  return groups
}

/**
 * The bits of one group of shards in memory, filled from keys hashed here: a key whose shard is in
 * the group sets its bits, any other key is skipped (a later pass builds its shard). Bits land
 * exactly where the filter (any backend) would put them: core's hashing, shard choice and
 * positions, and the memory backend's store for the bits themselves.
 */
export class ShardGroupBuilder {
  /** The group's bits (or counters) as a memory store of `count` shards, in snapshot order. */
  readonly store: MemoryBitStore | MemoryCounterStore
  readonly range: ShardRange
  private readonly parameters: FilterParameters
  private readonly hasher: KeyHasher
  private readonly fill: ReturnType<typeof positionsOf>
  private readonly shardBits: number
  private readonly batch: PositionBatch
  private readonly out = new Uint8Array(BATCH_KEYS)
  private scratch = new Uint8Array(256)

  /**
   * @param bytes Zeroed memory for the group (`count × shardBytes`, 4× that for counters), reused between passes.
   * @param counting Whether to count (a counting filter: each add increments the key's counters, docs/SPEC.md section 10).
   */
  constructor(parameters: FilterParameters, range: ShardRange, bytes: Uint8Array, { counting = false }: Counting = {}) {
    this.parameters = parameters
    this.range = range
    this.shardBits = shardBitsOf(parameters)
    const group = { ...parameters, bits: this.shardBits * range.count, shards: range.count }
    this.store = counting ? new MemoryCounterStore(group, bytes) : new MemoryBitStore(group, bytes)
    this.hasher = new KeyHasher(parameters.seed)
    this.fill = positionsOf(parameters.scheme)
    this.batch = new PositionBatch(BATCH_KEYS, parameters.hashes)
  }

  /** Sets the bits of the block's keys that fall in this group. */
  add(block: KeyBlock): void {
    const pair = this.hasher.pair
    if (block.kind === 'ranges') {
      const { data, starts, ends } = block
      const { seedA, seedB } = this.hasher
      for (let i = 0; i < block.count; i++) {
        // Copied into one scratch buffer rather than viewed with subarray: no allocation per key.
        const start = starts[i]
        const length = ends[i] - start
        if (length > this.scratch.length) this.scratch = new Uint8Array(length * 2)
        const scratch = this.scratch
        for (let j = 0; j < length; j++) scratch[j] = data[start + j]
        xxh32PairBytes(scratch, length, seedA, seedB, pair)
        this.place(pair[0], pair[1])
      }
    } else {
      for (const key of block.keys) {
        this.hasher.hash(key)
        this.place(pair[0], pair[1])
      }
    }
  }

  /** Writes what is still batched; call after the last block. */
  flush(): void {
    if (this.batch.size > 0) this.store.setBits(this.batch, this.out)
    this.batch.size = 0
  }

  private place(a: number, b: number): void {
    const local = shardOf(a, b, this.parameters.shards) - this.range.first
    if (local < 0 || local >= this.range.count) return
    const batch = this.batch
    const index = batch.size++
    batch.shards[index] = local
    this.fill(a, b, this.shardBits, this.parameters.hashes, batch.positions, index * this.parameters.hashes)
    if (batch.size === BATCH_KEYS) this.flush()
  }
}

/** Fills a group with every key of the input: one pass (re-reading the input for each group). */
export type PassRunner = (builder: ShardGroupBuilder, pass: number) => Promise<void>

/**
 * The snapshot (docs/SPEC.md) of a filter built from keys, as 1 MiB chunks: each group of shards is
 * filled by one pass over the input, then handed on whole, so a consumer (a file, a LevelDB import,
 * a Redis import) writes whole shards rather than single bits. At most one group is in memory.
 * Chunks are views into that memory: a consumer must be done with one before it asks for the next.
 */
export async function* buildSnapshot(parameters: FilterParameters, groups: readonly ShardRange[], runPass: PassRunner, { counting = false }: Counting = {}): AsyncGenerator<Uint8Array> {
  const shardBytes = shardSizeOf(parameters, { counting })
  const memory = new Uint8Array(Math.max(...groups.map((group) => group.count)) * shardBytes)
  let crc = 0
  for (let pass = 0; pass < groups.length; pass++) {
    const range = groups[pass]
    const bytes = memory.subarray(0, range.count * shardBytes)
    if (pass > 0) bytes.fill(0)
    const builder = new ShardGroupBuilder(parameters, range, bytes, { counting })
    await runPass(builder, pass)
    builder.flush()
    if (pass === 0) yield (counting ? encodeCountingHeader : encodeSnapshotHeader)({ parameters, items: estimateItems(parameters, builder.store.countBits()) })
    for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) {
      const chunk = bytes.subarray(offset, Math.min(bytes.length, offset + CHUNK_BYTES))
      crc = crc32(chunk, crc)
      yield chunk
    }
  }
  const trailer = new Uint8Array(4)
  new DataView(trailer.buffer).setUint32(0, crc, true)
  yield trailer
}

/**
 * The header's item count (a hint only): estimated from the first group's set bits, and for a
 * filter built in several passes scaled as if the other shards were filled alike.
 */
function estimateItems(parameters: FilterParameters, firstGroup: readonly number[]): number {
  const mean = firstGroup.reduce((sum, count) => sum + count, 0) / firstGroup.length
  const counts = Array.from({ length: parameters.shards }, (_, shard) => (shard < firstGroup.length ? firstGroup[shard] : Math.round(mean)))
  return fillStats(parameters, counts).estimatedCount
}
