// A replica's state: the filter's bits in one array laid out as the memory filter's (shard after
// shard, so core's ArrayProbe runs on it), and per shard whether those bits are trusted, the feed
// entry they were last brought up to, and when that catch-up began.
import { BloomError, type FilterParameters } from '@bloomkit/core'
import { ArrayProbe, shardBytesOf } from '@bloomkit/core/store'
import { shardOf } from '@bloomkit/core/spec'
import type { FeedEntry } from '../layout/feed.js'

/** A shard's place in its feed: the entry last applied, known by its ID and its tag (docs/SPEC.md 9.12). */
export interface FeedPosition {
  readonly id: string
  readonly tag: Uint8Array
}

/** Zeroed bytes for the bits, cache-line aligned when large (as the memory backend's: a block is one line). */
function newBits(length: number): Uint8Array {
  if (length >= 1 << 20) {
    try {
      return new Uint8Array(new WebAssembly.Memory({ initial: Math.ceil(length / 65536) }).buffer, 0, length)
    } catch {
      // fall through to a plain array
    }
  }
  return new Uint8Array(length)
}

/** The bits of every shard and what is known of each. */
export class ReplicaShards {
  readonly parameters: FilterParameters
  /** Every shard's bits, `shardBytes` each, in Redis SETBIT order. */
  readonly bits: Uint8Array
  /** Tests and sets keys' bits in {@link bits} from their hash pairs. */
  readonly probe: ArrayProbe
  readonly shardBytes: number
  /**
   * 1 while shard s's bits hold every bit the shard held when its position's entry was appended,
   * and every entry up to its position was applied: then "present" is answered from the bits and
   * a catch-up from the position proves "absent". 0 while it loads or must load again.
   */
  readonly ready: Uint8Array
  /** `performance.now()` when the last catch-up of shard s that read its feed to the end began. */
  readonly verifiedAt: Float64Array
  /** The entry each shard's bits were last brought up to. */
  readonly positions: Array<FeedPosition | undefined>
  /**
   * Per shard, how many loads began: a catch-up that was in flight when a load began must not
   * move the new load's position or answer from its bits (it read the feed as it was before).
   */
  readonly loadsBegun: Uint32Array
  /** Entries applied since the replica started, and loads done (for `status`). */
  entriesApplied = 0
  loads = 0

  constructor(parameters: FilterParameters) {
    this.parameters = parameters
    this.shardBytes = shardBytesOf(parameters)
    this.bits = newBits(this.shardBytes * parameters.shards)
    this.probe = new ArrayProbe(parameters, this.bits)
    this.ready = new Uint8Array(parameters.shards)
    this.verifiedAt = new Float64Array(parameters.shards).fill(-Infinity)
    this.positions = new Array<FeedPosition | undefined>(parameters.shards)
    this.loadsBegun = new Uint32Array(parameters.shards)
  }

  /** Marks `shard` as loading: not ready, and any catch-up in flight for it void. */
  beginLoad(shard: number): void {
    this.ready[shard] = 0
    this.loadsBegun[shard]++
  }

  /** Shards, in ascending order, whose bits are trusted. */
  readyShards(): number[] {
    const list: number[] = []
    for (let s = 0; s < this.ready.length; s++) if (this.ready[s] === 1) list.push(s)
    return list
  }

  /**
   * Sets the bits of every key of an add entry read from `shard`'s feed.
   * @throws BloomError `BLOOM_CORRUPT_STORE` for a key of another shard (docs/SPEC.md 9.12: every
   *   key of an entry belongs to its feed's shard).
   */
  apply(shard: number, entry: FeedEntry): void {
    const { pairs } = entry
    const shards = this.parameters.shards
    for (let i = 0; i < pairs.length; i += 2) {
      const a = pairs[i] | 0
      const b = pairs[i + 1] | 0
      if (shardOf(a, b, shards) !== shard) {
        throw new BloomError('BLOOM_CORRUPT_STORE', `feed entry ${entry.id} of shard ${shard} lists a key of shard ${shardOf(a, b, shards)} (docs/SPEC.md 9.12)`)
      }
      this.probe.add(a, b)
    }
    this.entriesApplied++
  }

  /** Copies bytes read from Redis into shard `shard` at byte `offset`. */
  write(shard: number, offset: number, bytes: Uint8Array): void {
    this.bits.set(bytes, shard * this.shardBytes + offset)
  }
}
