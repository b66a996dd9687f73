// A replica of a fixed Redis filter (docs/SPEC.md 9.13): its bits in this process, loaded once and
// kept current from the feed; "present" answered from them at once, "absent" once a barrier that
// began after the call proved them current (or, bounded, while the last catch-up is recent enough),
// anything in doubt asked of Redis.
import { BloomError, type BloomKey } from '@bloomkit/core'
import { layeredBatch, TEST_BITS, type BitStore, type KeyHasher } from '@bloomkit/core/store'
import { shardOf } from '@bloomkit/core/spec'
import { dataLost } from '../errors.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { Barriers, type BarrierOutcome, type BarrierWaiter } from './barriers.js'
import { FRESH, LOST } from './catch-up.js'
import { Follower, IDLE_CATCH_UP_MS } from './follower.js'
import type { ReplicaSettings } from './replica-options.js'
import { ReplicaShards } from './replica-shards.js'
import { addThroughReplica, type ReplicaHost } from './replica-adds.js'
import { loadShard } from './shard-loader.js'

const { layerBatch } = layeredBatch

/** Answers shared by every call (a settled Promise can be handed to any number of callers). */
const TRUE = Promise.resolve(true)
const FALSE = Promise.resolve(false)
/** Keys hashed, then probed together, per step of a batch (as the memory filter's hasMany). */
const CHUNK = 256
/** After a load found no feed entry or kept losing its position, how long until it tries again (ms). */
const RELOAD_RETRY_MS = 1000

/** What a replica can tell about itself (`filter.replica`). */
export interface ReplicaStatus {
  /** Shards whose bits answer calls now (the others are loading: their calls go to Redis). */
  readonly readyShards: number
  readonly shards: number
  /** Bytes of the bits held. */
  readonly bytes: number
  /** Feed entries applied, shard loads done and barriers run since the replica started. */
  readonly entriesApplied: number
  readonly loads: number
  readonly barriers: number
  /** Milliseconds since the oldest ready shard's last completed catch-up began (Infinity with none ready). */
  readonly staleness: number
  /** `maxStaleness` in bounded mode, else 0 (strict). */
  readonly maxStaleness: number
}

/** One key waiting for a barrier before it may be answered "absent". */
class KeyWaiter implements BarrierWaiter {
  constructor(
    private readonly replica: Replica,
    private readonly shard: number,
    private readonly a: number,
    private readonly b: number,
    private readonly resolve: (present: boolean | Promise<boolean>) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  settle({ status, error }: BarrierOutcome): void {
    if (error !== undefined) return this.reject(error)
    const found = status[this.shard]
    if (found === FRESH) return this.resolve(this.replica.shards.probe.has(this.a, this.b))
    if (found === LOST) return this.reject(dataLost(`has on ${this.replica.generations.names.shard(this.shard)}`))
    this.resolve(this.replica.server(Uint32Array.of(this.a >>> 0, this.b >>> 0)).then((out) => out[0] === 1))
  }
}

/** The replica of one fixed filter: what `RedisBloomFilter` answers through when opened with `replica`. */
export class Replica implements ReplicaHost {
  readonly generations: ShardGenerations
  readonly shards: ReplicaShards
  readonly store: BitStore<false>
  private readonly hasher: KeyHasher
  private readonly settings: ReplicaSettings
  private readonly barriers: Barriers
  private readonly follower: Follower
  private readonly shardCount: number
  private readonly maxStaleness: number
  private readonly reloading = new Set<number>()
  private closed = false
  /** Single adds made in the current tick, sent together when it ends. */
  private pendingAdds: Array<{ readonly a: number; readonly b: number; readonly resolve: (fresh: boolean) => void; readonly reject: (error: unknown) => void }> = []

  /**
   * @param store The filter's own store: the server path for shards not loaded.
   * @param hasher The filter's hasher (its seed).
   */
  constructor(generations: ShardGenerations, store: BitStore<false>, hasher: KeyHasher, settings: ReplicaSettings) {
    this.generations = generations
    this.store = store
    this.hasher = hasher
    this.settings = settings
    this.shards = new ReplicaShards(generations.parameters)
    this.shardCount = generations.parameters.shards
    this.maxStaleness = settings.maxStaleness
    this.barriers = new Barriers(generations, this.shards, (shard) => this.reload(shard))
    // Bounded mode keeps every shard verified within its bound while nothing arrives.
    const idle = settings.maxStaleness > 0 ? Math.max(1, Math.min(IDLE_CATCH_UP_MS, Math.floor(settings.maxStaleness / 2))) : IDLE_CATCH_UP_MS
    this.follower = new Follower(generations, this.shards, this.barriers, idle)
  }

  /**
   * Loads every shard, then starts following the feeds. A shard that cannot be loaded yet (its
   * feed missing) is served by Redis and loaded later.
   * @throws BloomError as a load does (`BLOOM_DATA_LOST`, the meta's verdict, `BLOOM_STORE_UNAVAILABLE`).
   */
  async start(): Promise<void> {
    await this.generations.forEachShard(async (shard) => {
      if ((await loadShard(this.generations, this.shards, shard)) !== 'loaded') this.reloadLater(shard)
    })
    this.follower.start()
  }

  /** Whether the key hashed to `a`, `b` may be in the filter (see the class comment). */
  has(a: number, b: number): Promise<boolean> {
    const shard = shardOf(a, b, this.shardCount)
    if (this.shards.ready[shard] === 0) return this.server(Uint32Array.of(a >>> 0, b >>> 0)).then((out) => out[0] === 1)
    if (this.shards.probe.has(a, b)) return TRUE
    if (this.maxStaleness > 0 && performance.now() - this.shards.verifiedAt[shard] <= this.maxStaleness) return FALSE
    return new Promise((resolve, reject) => this.barriers.wait(shard, new KeyWaiter(this, shard, a, b, resolve, reject)))
  }

  /** {@link has} for many keys: one barrier for all that need one, one server batch for those in shards not loaded. */
  async hasMany(input: Iterable<BloomKey>): Promise<boolean[]> {
    const keys = Array.isArray(input) ? (input as readonly BloomKey[]) : [...input]
    const count = keys.length
    const results = new Array<boolean>(count)
    const pairs = new Uint32Array(2 * count)
    const { probe, ready, verifiedAt } = this.shards
    const hasher = this.hasher
    const pair = hasher.pair
    const blocked = probe.blocked
    const chunkPairs = new Int32Array(2 * CHUNK)
    const starts = new Int32Array(CHUNK)
    const out = new Uint8Array(CHUNK)
    const now = this.maxStaleness > 0 ? performance.now() : 0
    let waiting: number[] | undefined
    let wanted: Uint8Array | undefined
    let server: number[] | undefined
    for (let from = 0; from < count; from += CHUNK) {
      const size = Math.min(CHUNK, count - from)
      for (let i = 0; i < size; i++) {
        hasher.hash(keys[from + i])
        const a = pair[0]
        const b = pair[1]
        chunkPairs[2 * i] = a
        chunkPairs[2 * i + 1] = b
        pairs[2 * (from + i)] = a
        pairs[2 * (from + i) + 1] = b
        starts[i] = blocked ? probe.blockByte(a, b) : probe.firstByte(a, b)
      }
      probe.many(TEST_BITS, chunkPairs, size, starts, out)
      for (let i = 0; i < size; i++) {
        const index = from + i
        const shard = shardOf(chunkPairs[2 * i], chunkPairs[2 * i + 1], this.shardCount)
        if (ready[shard] === 0) {
          ;(server ??= []).push(index)
        } else if (out[i] === 1) {
          results[index] = true
        } else if (this.maxStaleness > 0 && now - verifiedAt[shard] <= this.maxStaleness) {
          results[index] = false
        } else {
          ;(waiting ??= []).push(index)
          ;(wanted ??= new Uint8Array(this.shardCount))[shard] = 1
        }
      }
    }
    if (waiting !== undefined) {
      const after = await this.barrierFor(wanted!, waiting, pairs, results)
      if (after.length > 0) (server ??= []).push(...after)
    }
    if (server !== undefined) {
      const answers = await this.server(pairs, server)
      for (let j = 0; j < server.length; j++) results[server[j]] = answers[j] === 1
    }
    return results
  }

  /**
   * {@link hasMany} for keys already hashed (`pairs`: a and b of key i at 2i, 2i + 1), as a layered
   * filter's layers share its pairs: found[i] = 1 where key i may be present, with the same rules
   * (present at once, absent after a barrier or within the bound, shards not loaded asked of Redis).
   * Keys with skip[i] = 1 are not asked (found[i] stays 0).
   */
  async testPairs(pairs: Uint32Array, size: number, skip?: Uint8Array): Promise<Uint8Array> {
    const found = new Uint8Array(size)
    const results = new Array<boolean>(size)
    const { probe, ready, verifiedAt } = this.shards
    const now = this.maxStaleness > 0 ? performance.now() : 0
    let waiting: number[] | undefined
    let wanted: Uint8Array | undefined
    let server: number[] | undefined
    for (let i = 0; i < size; i++) {
      if (skip !== undefined && skip[i] === 1) continue
      const a = pairs[2 * i] | 0
      const b = pairs[2 * i + 1] | 0
      const shard = shardOf(a, b, this.shardCount)
      if (ready[shard] === 0) (server ??= []).push(i)
      else if (probe.has(a, b)) found[i] = 1
      else if (this.maxStaleness > 0 && now - verifiedAt[shard] <= this.maxStaleness) continue
      else {
        ;(waiting ??= []).push(i)
        ;(wanted ??= new Uint8Array(this.shardCount))[shard] = 1
      }
    }
    if (waiting !== undefined) {
      const after = await this.barrierFor(wanted!, waiting, pairs, results)
      for (const i of waiting) if (results[i] === true) found[i] = 1
      if (after.length > 0) (server ??= []).push(...after)
    }
    if (server !== undefined) {
      const answers = await this.server(pairs, server)
      for (let j = 0; j < server.length; j++) found[server[j]] = answers[j]
    }
    return found
  }

  /** Whether the bits held show the key hashed to `a`, `b` present (no I/O; false for a shard not loaded). */
  showsPresent(a: number, b: number): boolean {
    return this.shards.ready[shardOf(a, b, this.shardCount)] === 1 && this.shards.probe.has(a, b)
  }

  /** Waits for a barrier over `wanted` and answers `waiting` from the bits; resolves to the keys to ask Redis about. */
  private barrierFor(wanted: Uint8Array, waiting: number[], pairs: Uint32Array, results: boolean[]): Promise<number[]> {
    return new Promise((resolve, reject) => {
      this.barriers.waitAll(wanted, {
        settle: ({ status, error }) => {
          if (error !== undefined) return reject(error)
          const { probe } = this.shards
          const server: number[] = []
          for (const index of waiting) {
            const a = pairs[2 * index] | 0
            const b = pairs[2 * index + 1] | 0
            const shard = shardOf(a, b, this.shardCount)
            const found = status[shard]
            if (found === FRESH) results[index] = probe.has(a, b)
            else if (found === LOST) return reject(dataLost(`hasMany on ${this.generations.names.shard(shard)}`))
            else server.push(index)
          }
          resolve(server)
        },
      })
    })
  }

  /** Adds the key hashed to `a`, `b`; the adds of one tick travel together (replica-adds.ts). */
  add(a: number, b: number): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.pendingAdds.push({ a, b, resolve, reject }) === 1) queueMicrotask(() => this.flushAdds())
    })
  }

  /** Adds `keys` (replica-adds.ts); answers whether each was new, in order. */
  async addMany(input: Iterable<BloomKey>): Promise<boolean[]> {
    const keys = Array.isArray(input) ? (input as readonly BloomKey[]) : [...input]
    const pairs = new Uint32Array(2 * keys.length)
    const hasher = this.hasher
    for (let i = 0; i < keys.length; i++) {
      hasher.hash(keys[i])
      pairs[2 * i] = hasher.a
      pairs[2 * i + 1] = hasher.b
    }
    const out = await addThroughReplica(this, pairs)
    return Array.from(out, (fresh) => fresh === 1)
  }

  /** Loads `shard` again at once (an add found its position gone); its calls go to Redis meanwhile. */
  markStale(shard: number): void {
    this.shards.beginLoad(shard)
    this.reload(shard)
  }

  private flushAdds(): void {
    const adds = this.pendingAdds
    this.pendingAdds = []
    const pairs = new Uint32Array(2 * adds.length)
    for (let i = 0; i < adds.length; i++) {
      pairs[2 * i] = adds[i].a >>> 0
      pairs[2 * i + 1] = adds[i].b >>> 0
    }
    addThroughReplica(this, pairs).then(
      (out) => adds.forEach((add, i) => add.resolve(out[i] === 1)),
      (error: unknown) => adds.forEach((add) => add.reject(error)),
    )
  }

  /** The server path for the keys whose pairs are in `pairs` (those at `indexes`, else all): the filter's own store, as without a replica. */
  server(pairs: Uint32Array, indexes?: readonly number[]): Promise<Uint8Array> {
    const batch = layerBatch(this.generations.parameters, pairs, indexes)
    const out = new Uint8Array(batch.size)
    return this.store.testBits(batch, out).then(() => out)
  }

  /** What the replica holds now. */
  status(): ReplicaStatus {
    const { ready, verifiedAt, entriesApplied, loads } = this.shards
    const now = performance.now()
    let oldest = Infinity
    let readyShards = 0
    for (let s = 0; s < ready.length; s++) {
      if (ready[s] === 0) continue
      readyShards++
      oldest = Math.min(oldest, verifiedAt[s])
    }
    return {
      readyShards,
      shards: this.shardCount,
      bytes: this.shards.bits.length,
      entriesApplied,
      loads,
      barriers: this.barriers.completed,
      staleness: readyShards === 0 ? Infinity : now - oldest,
      maxStaleness: this.settings.maxStaleness,
    }
  }

  /** Stops following and drops the follower's connection; idempotent. */
  close(): void {
    this.closed = true
    this.follower.stop()
  }

  /** Loads `shard` again (a barrier found its position gone); its calls go to Redis meanwhile. */
  private reload(shard: number): void {
    if (this.closed || this.reloading.has(shard)) return
    this.reloading.add(shard)
    loadShard(this.generations, this.shards, shard).then(
      (outcome) => {
        this.reloading.delete(shard)
        if (outcome !== 'loaded') this.reloadLater(shard)
      },
      () => {
        this.reloading.delete(shard)
        this.reloadLater(shard)
      },
    )
  }

  private reloadLater(shard: number): void {
    if (this.closed) return
    setTimeout(() => this.reload(shard), RELOAD_RETRY_MS).unref?.()
  }
}

/**
 * Refuses a replica of a filter without a feed.
 * @throws BloomError `BLOOM_INCOMPATIBLE`, saying how to get a filter with one.
 */
export function refuseWithoutFeed(name: string, feedLength: number): void {
  if (feedLength > 0) return
  throw new BloomError(
    'BLOOM_INCOMPATIBLE',
    `replica: filter "${name}" has no feed (store format 1), which a replica follows. Create the filter with { feed: true } (or { replica: true }), or export it and import the snapshot into a new name with { feed: true }`,
  )
}
