import { BloomError } from '@bloomkit/core'
import { shardBytesOf } from '@bloomkit/core/store'
import type { FilterParameters } from '@bloomkit/core'
import { callRedis, dataLost } from '../errors.js'
import type { KeyNames } from './key-names.js'
import { resetValue } from './feed.js'
import { CHECKED_FIELDS, checkedValues, formatOf } from './meta.js'
import type { RedisArgument, RedisClient } from '../wire/client.js'
import { runScript, type ScriptOptions } from '../wire/script.js'
import { SET_MARKER, SWAP_SHARD } from './scripts.js'

/** Bytes per SETRANGE/GETRANGE when writing or reading a shard's bits. */
export const IO_CHUNK_BYTES = 1 << 20

/**
 * `length` bytes of a shard, read in steps of {@link IO_CHUNK_BYTES} by `read(at, end)` (the
 * step's range from the start of the read, `end` exclusive). A step that comes back short is a
 * lost or truncated shard key: `BLOOM_DATA_LOST` naming `what`.
 */
export async function readInSteps(length: number, read: (at: number, end: number) => Promise<Buffer>, what: string): Promise<Uint8Array> {
  const out = new Uint8Array(length)
  for (let at = 0; at < length; at += IO_CHUNK_BYTES) {
    const end = Math.min(length, at + IO_CHUNK_BYTES)
    const bytes = await read(at, end)
    if (bytes.length !== end - at) throw dataLost(what)
    out.set(bytes, at)
  }
  return out
}

/** Hands `bytes` to `write` in pieces of at most `stepBytes`, one after another, each with its offset in `bytes`. */
export async function writeInSteps(bytes: Uint8Array, stepBytes: number, write: (at: number, piece: Buffer) => Promise<unknown>): Promise<void> {
  for (let at = 0; at < bytes.length; at += stepBytes) {
    const piece = bytes.subarray(at, Math.min(bytes.length, at + stepBytes))
    await write(at, Buffer.from(piece.buffer, piece.byteOffset, piece.length))
  }
}
/**
 * The most bytes one command allocates: 4 MiB, zero-filled in ~3 ms here (page faults included),
 * under Redis's default slow-log threshold of 10 ms. A default shard (≤ 4 MiB with its marker) is allocated by one SETRANGE at its
 * last byte, which Redis sizes exactly; a larger shard grows in 4 MiB steps, and Redis's greedy
 * growth then leaves up to 1 MiB unused at its end.
 */
export const ALLOC_STEP_BYTES = 4 << 20
/** Shards worked on at once by whole-filter operations (create, import, rebuild, clear, destroy). */
const SHARD_CONCURRENCY = 16

/** Runs `work(i)` for i in [0, count) with at most `limit` running at once. */
export async function forEachLimited(count: number, limit: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await work(next++)
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
}

/** Which generation of shard keys a store reads and writes: the live one, or the next one a rebuild fills. */
export type Generation = 'live' | 'next'

/** A shard marker as it is stored: 4 bytes, big-endian. */
export function markerBytes(value: number): Buffer {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(value >>> 0)
  return bytes
}

/**
 * One filter's shard keys in Redis, and the steps that build a shard's next generation and swap
 * it in (create, import, rebuild and clear all go through them).
 *
 * Each shard key holds the shard's bits in SETBIT order followed by a 4-byte marker: the filter's
 * epoch × 2, + 1 while a rebuild wants writes copied to the next generation. A key without one of
 * these markers is lost (evicted, expired, deleted, or another filter's).
 */
export class ShardGenerations {
  /** The user's ioredis client; nothing here closes it. */
  readonly client: RedisClient
  readonly names: KeyNames
  readonly parameters: FilterParameters
  /** The random number that marks this filter's shard keys; changes when the name is re-created. */
  readonly epoch: number
  /** Milliseconds each command may take. */
  readonly timeout: number
  readonly shardBytes: number
  /** The marker of a shard key in its plain state (epoch × 2). */
  readonly marker: number
  readonly markerPlain: Buffer
  /** The marker of a live shard key while a rebuild copies writes to the next generation. */
  readonly markerFlagged: Buffer
  /**
   * For a filter with a feed (store format 2, docs/SPEC.md 9.12), the entries each shard's feed
   * keeps (`XADD … MAXLEN ~`); 0 for a filter without one. Every add to a live shard then appends
   * its keys to the shard's feed in the same atomic step, and every swap resets the feed.
   */
  readonly feedLength: number
  /** The meta's checked fields as this instance knows them. */
  private readonly metaValues: string[]
  /** Whether a live key may carry the flagged marker: not a counting filter's, which no rebuild flags (docs/SPEC.md 9.11). */
  private readonly flagAccepted: boolean

  /**
   * @param counterBits 4 for a counting filter, whose shard strings hold a 4-bit counter per
   *   position (docs/SPEC.md, section 9.11), 0 for a plain one.
   * @param feedLength See {@link feedLength}; 0 (the default) for a filter without a feed.
   */
  constructor(client: RedisClient, names: KeyNames, parameters: FilterParameters, epoch: number, timeout: number, counterBits = 0, feedLength = 0) {
    this.client = client
    this.names = names
    this.parameters = parameters
    this.epoch = epoch
    this.timeout = timeout
    this.shardBytes = shardBytesOf(parameters) * Math.max(1, counterBits)
    this.marker = epoch * 2
    this.markerPlain = markerBytes(this.marker)
    this.markerFlagged = markerBytes(this.marker + 1)
    this.feedLength = feedLength
    this.metaValues = checkedValues(parameters, epoch, formatOf(feedLength))
    this.flagAccepted = counterBits === 0
  }

  /**
   * The client's key prefix (ioredis's `keyPrefix` option, or ''): ioredis adds it to the keys it
   * knows as keys, so it is added here where a key travels as an argument or in RESP we write.
   */
  get keyPrefix(): string {
    return this.client.options.keyPrefix ?? ''
  }

  /**
   * Compares the meta hash's checked fields with those this instance works with, so that a meta
   * changed under an open filter (a migration script editing `seed`) fails the call instead of
   * leaving instances that disagree. One HMGET, sent beside a batch's own commands.
   * @throws BloomError `BLOOM_CORRUPT_STORE` for changed fields, `BLOOM_DATA_LOST` when the meta
   *   is gone or belongs to a filter created again under the name.
   */
  async verifyMeta(what: string): Promise<void> {
    this.checkMeta(await this.call(this.client.hmget(this.names.meta, ...CHECKED_FIELDS), what), what)
  }

  /**
   * {@link verifyMeta}'s verdict on the stored values of the meta's checked fields, in
   * {@link CHECKED_FIELDS} order (null for a missing field).
   */
  checkMeta(stored: ReadonlyArray<string | null>, what: string): void {
    const expected = this.metaValues
    if (stored.every((value, i) => value === expected[i])) return
    const name = this.names.name
    if (stored.every((value) => value === null)) {
      throw new BloomError('BLOOM_DATA_LOST', `${what}: the meta hash of filter "${name}" is gone (destroyed, expired or evicted); recreate or import it`)
    }
    const epoch = CHECKED_FIELDS.indexOf('epoch')
    if (stored[epoch] !== expected[epoch]) {
      throw new BloomError('BLOOM_DATA_LOST', `${what}: filter "${name}" was destroyed and created again (epoch ${stored[epoch]}, this instance has ${expected[epoch]}); open it anew`)
    }
    const changed = CHECKED_FIELDS.filter((_, i) => stored[i] !== expected[i]).map((field) => `${field} ${JSON.stringify(stored[CHECKED_FIELDS.indexOf(field)])} (opened with ${expected[CHECKED_FIELDS.indexOf(field)]})`)
    throw new BloomError('BLOOM_CORRUPT_STORE', `${what}: the meta hash of filter "${name}" was changed under this open filter: ${changed.join(', ')}. Restore it; answering would give false negatives`)
  }

  /**
   * Checks shard 0 against the meta, as `open` does (docs/SPEC.md 9.4, open step 6): a key with an
   * accepted marker where the meta puts it (the plain one, or the flagged one unless it is a
   * counting filter's, 9.11) is fine, and a missing one is left to the calls; a key
   * that instead ends in this filter's marker means the meta's size was edited (even with the
   * `check` field edited to match); anything else is a lost shard, as every call would say.
   * @throws BloomError `BLOOM_CORRUPT_STORE` (the meta disagrees with its shards) or
   *   `BLOOM_DATA_LOST` (shard 0 lacks its marker: re-created, truncated, another filter's).
   */
  async verifyShardsAgree(what: string): Promise<void> {
    const key = this.names.shard(0)
    // Its length, the 4 bytes where the meta puts the marker, and its last 4 bytes (GETRANGE counts
    // negative offsets from the end), in one round trip.
    const [strlen, atMarker, last] = await Promise.all([
      this.call(this.client.strlen(key), what),
      this.call(this.client.getrangeBuffer(key, this.shardBytes, this.shardBytes + 3), what),
      this.call(this.client.getrangeBuffer(key, -4, -1), what),
    ])
    const length = Number(strlen)
    const accepted = (marker: Buffer) => marker.length === 4 && (marker.equals(this.markerPlain) || (this.flagAccepted && marker.equals(this.markerFlagged)))
    // Every call checks the marker where the meta puts it, and so does open.
    if (length === 0 || accepted(atMarker)) return
    if (accepted(last)) {
      throw new BloomError(
        'BLOOM_CORRUPT_STORE',
        `${what}: filter "${this.names.name}": its meta hash disagrees with its shards (meta: ${this.shardBytes} bytes a shard; shard 0 holds ${length - 4} and this filter's marker). Restore the meta, or rebuild the filter under a new name`,
      )
    }
    throw dataLost(`${what}: shard 0 of filter "${this.names.name}" (${length} bytes, no marker of epoch ${this.epoch} at byte ${this.shardBytes})`)
  }

  /** The key of `shard` in `generation`. */
  key(shard: number, generation: Generation): string {
    return generation === 'live' ? this.names.shard(shard) : this.names.nextShard(shard)
  }

  /** Whether a key of `generation` with this marker is this filter's to read and write. */
  accepts(marker: number, generation: Generation): boolean {
    return marker === this.marker || (marker === this.marker + 1 && generation === 'live')
  }

  /** The marker besides the plain one that a key of `generation` may carry (scripts take both). */
  otherMarker(generation: Generation): Buffer {
    return generation === 'live' ? this.markerFlagged : this.markerPlain
  }

  /** Runs `promise` under the timeout, mapping errors to coded BloomErrors. */
  call<T>(promise: Promise<T>, what: string): Promise<T> {
    return callRedis(promise, this.timeout, what)
  }

  /** Runs `script` (keys and arguments as EVAL's: their count first) bounded by the timeout, through the one script runner. */
  script(script: string, keysAndArgs: readonly RedisArgument[], what: string, options?: ScriptOptions): Promise<unknown> {
    return runScript(this.client, script, keysAndArgs, this.timeout, what, options)
  }

  /**
   * Replaces every live shard by an empty one: allocated as its next generation, sealed with its
   * marker, swapped in with one RENAME (with `ttlMs`, 0 for none), so that a reader sees the old
   * shard or the empty one, never a half. A create's shards, and a clear's.
   */
  renewShards({ ttlMs = 0 }: { readonly ttlMs?: number } = {}): Promise<void> {
    return this.forEachShard(async (shard) => {
      await this.allocateNext(shard)
      await this.sealNext(shard)
      await this.swapNext(shard, ttlMs)
    })
  }

  /** Runs `work` for every shard, a bounded number at once. */
  forEachShard(work: (shard: number) => Promise<unknown>): Promise<void> {
    return forEachLimited(this.parameters.shards, SHARD_CONCURRENCY, work)
  }

  /**
   * Makes the next-generation key of `shard` a zeroed string of the shard's size plus its (still
   * zero) marker, allocating at most {@link ALLOC_STEP_BYTES} per command: a 1-byte SETRANGE past
   * the end, which Redis zero-fills, so only one byte travels and even a 512 MiB shard never
   * blocks Redis for long. With `through`, only the steps that hold byte `through − 1` ({@link growNext}
   * adds the rest). Returns the key's length.
   */
  async allocateNext(shard: number, { through = this.shardBytes }: { readonly through?: number } = {}): Promise<number> {
    const key = this.names.nextShard(shard)
    await this.call(this.client.del(key), `allocate ${key}`)
    return this.growNext(shard, 0, through)
  }

  /**
   * Grows the next-generation key of `shard`, `allocated` bytes long, in the steps
   * {@link allocateNext} takes, until it holds byte `through − 1` (all of it, marker included,
   * once `through` reaches the shard's size). Returns its length. An import grows each shard as
   * its bytes arrive, so a snapshot whose header promises more than it holds allocates no more
   * than a step beyond what it sent.
   */
  async growNext(shard: number, allocated: number, through: number): Promise<number> {
    const key = this.names.nextShard(shard)
    const total = this.shardBytes + 4
    const target = through >= this.shardBytes ? total : Math.min(total, Math.ceil(through / ALLOC_STEP_BYTES) * ALLOC_STEP_BYTES)
    let end = allocated
    while (end < target) {
      end = Math.min(total, (Math.floor(end / ALLOC_STEP_BYTES) + 1) * ALLOC_STEP_BYTES)
      await this.call(this.client.setrange(key, end - 1, '\0'), `allocate ${key}`)
    }
    return end
  }

  /** Writes bytes of the (allocated) next generation's shard in place; no marker check: nobody reads it yet. */
  async writeNext(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    const key = this.names.nextShard(shard)
    await writeInSteps(bytes, IO_CHUNK_BYTES, (at, piece) => this.call(this.client.setrange(key, offset + at, piece), `write ${key}`))
  }

  /** Writes the marker after the next generation's bits: from now on the key counts as complete. */
  async sealNext(shard: number): Promise<void> {
    const key = this.names.nextShard(shard)
    await this.call(this.client.setrange(key, this.shardBytes, this.markerPlain), `seal ${key}`)
  }

  /**
   * Atomically replaces the live shard by the sealed next generation (one script: check, RENAME,
   * keep the TTL). `ttlMs` is used when the live key has none left (it was lost); 0 for none.
   * A filter with a feed has the shard's feed reset in the same script (docs/SPEC.md 9.12).
   */
  async swapNext(shard: number, ttlMs: number): Promise<void> {
    const next = this.names.nextShard(shard)
    const live = this.names.shard(shard)
    const ttl = Math.max(0, Math.round(ttlMs))
    const keysAndArgs =
      this.feedLength > 0
        ? [3, next, live, this.names.feed(shard), this.shardBytes, this.markerPlain, ttl, this.feedLength, resetValue()]
        : [2, next, live, this.shardBytes, this.markerPlain, ttl]
    await this.script(SWAP_SHARD, keysAndArgs, `swap ${live}`)
  }

  /** A fresh, empty next generation of every shard, sealed (not yet swapped in). */
  async buildEmptyNext(): Promise<void> {
    await this.forEachShard(async (shard) => {
      await this.allocateNext(shard)
      await this.sealNext(shard)
    })
  }

  /**
   * Sets the live shard's marker to `marker`: while `flagged`, every add is also written to the
   * next generation, so a rebuild loses no key added while it runs; `plain` again when it is over.
   * Returns false if the live key is lost (a rebuild then simply replaces it).
   */
  async markLive(shard: number, marker: 'flagged' | 'plain'): Promise<boolean> {
    const key = this.names.shard(shard)
    const result = await this.script(SET_MARKER, [1, key, this.shardBytes, this.markerPlain, this.markerFlagged, marker === 'flagged' ? this.markerFlagged : this.markerPlain], `flag ${key}`)
    return Number(result) === 1
  }

  /** Sets a TTL in ms (0: none) on the live key of `shard`, and on its feed. */
  async expireLive(shard: number, ttlMs: number): Promise<void> {
    const keys = this.feedLength > 0 ? [this.names.shard(shard), this.names.feed(shard)] : [this.names.shard(shard)]
    await Promise.all(keys.map((key) => this.call(ttlMs > 0 ? this.client.pexpire(key, ttlMs) : this.client.persist(key), `expire ${key}`)))
  }

  /** The meta's remaining TTL in ms, 0 for none (what swapped-in shards get when theirs is gone). */
  async metaTtlMs(what: string): Promise<number> {
    return Math.max(0, Number(await this.call(this.client.pttl(this.names.meta), what)))
  }

  /**
   * Deletes the filter: meta first (so nobody opens it any more), then every shard key, next
   * generation and feed (a shard's keys share a slot: one UNLINK, also on a Cluster).
   */
  async deleteAll(): Promise<void> {
    await this.call(this.client.del(this.names.meta), 'destroy')
    await this.forEachShard((shard) => this.call(this.client.unlink(this.names.shard(shard), this.names.nextShard(shard), this.names.feed(shard)), 'destroy'))
  }
}
