import { BLOCK_BITS, blockIndex, PROBE_STEP, scaleToShard, shardOf } from '@bloomkit/core/spec'
import { BloomFilter, sizeFilter, type BloomKey, type FilterParametersInput, type LayeredOptions, type SizingOptions } from '@bloomkit/core'
import { createKeyHasher, decodeSnapshot, isLayeredOptions, KeyHasher, shardBytesOf } from '@bloomkit/core/store'
import { LayeredMemoryFilter } from './layered-memory-filter.js'
import { MemoryBitStore } from './memory-bit-store.js'

const BLOCK_BYTES = BLOCK_BITS / 8

/**
 * A Bloom filter in a `Uint8Array`: synchronous `add`/`has`/`addMany`/`hasMany`, no Promise and
 * no allocation per key. Memory is `bits / 8` bytes plus a small constant.
 *
 * @example
 * const filter = await MemoryBloomFilter.create({ capacity: 1_000_000, errorRate: 0.01 })
 * filter.add('user:42') // true
 * filter.has('user:42') // true
 */
export class MemoryBloomFilter extends BloomFilter<true> {
  private readonly bytes: Uint8Array
  private readonly shardBytes: number
  private readonly blocked: boolean
  // Copies of parameters.hashes and .shards, one property load closer to the hot loops.
  private readonly hashes: number
  private readonly shards: number
  /** Blocks per shard (blocked layout), so that no key pays for the division. */
  private readonly blocks: number

  /** Prefer {@link MemoryBloomFilter.create}; this adopts a store and a hasher made for its seed. */
  constructor(store: MemoryBitStore, hasher: KeyHasher) {
    super(store, hasher)
    this.bytes = store.bytes
    this.shardBytes = shardBytesOf(store.parameters)
    this.blocked = store.parameters.layout === 'blocked'
    this.hashes = store.parameters.hashes
    this.shards = store.parameters.shards
    this.blocks = this.shardBits / BLOCK_BITS
  }

  /**
   * A new, empty filter sized for `capacity` keys at `errorRate` (see `sizeFilter` in core); with
   * `growth` or `window`, a {@link LayeredMemoryFilter} that grows or forgets.
   * Async only because xxhash-wasm compiles once per process; where WebAssembly is forbidden it
   * falls back to the bit-identical pure-JS hash.
   * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
   */
  static create(options: LayeredOptions): Promise<LayeredMemoryFilter>
  static create(options: SizingOptions): Promise<MemoryBloomFilter>
  static async create(options: SizingOptions | LayeredOptions): Promise<MemoryBloomFilter | LayeredMemoryFilter> {
    // With `growth` or `window`, a layered filter (layered-memory-filter.ts).
    if (isLayeredOptions(options)) return LayeredMemoryFilter.create(options)
    return MemoryBloomFilter.fromParameters(sizeFilter(options))
  }

  /** A new, empty filter with explicit parameters (e.g. those of a filter you will merge with). */
  static async fromParameters(parameters: FilterParametersInput): Promise<MemoryBloomFilter> {
    const store = new MemoryBitStore(parameters)
    return new MemoryBloomFilter(store, await createKeyHasher(store.parameters.seed))
  }

  /**
   * Like {@link MemoryBloomFilter.fromParameters}, without waiting for xxhash-wasm: for code that
   * cannot await. Keys hash with the pure-JS XXH32 (identical results; slower only for keys of
   * 128 bytes and more) until a later async `create` has loaded WebAssembly.
   */
  static fromParametersSync(parameters: FilterParametersInput): MemoryBloomFilter {
    const store = new MemoryBitStore(parameters)
    return new MemoryBloomFilter(store, new KeyHasher(store.parameters.seed))
  }

  /** Like {@link MemoryBloomFilter.import}, without waiting for xxhash-wasm (see {@link fromParametersSync}). */
  static importSync(snapshot: Uint8Array): MemoryBloomFilter {
    const { parameters, payload } = decodeSnapshot(snapshot)
    return new MemoryBloomFilter(new MemoryBitStore(parameters, payload.slice()), new KeyHasher(parameters.seed))
  }

  /**
   * The filter in a snapshot from `export()` of any backend. The bytes are checked (length,
   * header and payload CRC-32) before anything is built, and copied.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` or `BLOOM_UNSUPPORTED_VERSION`.
   */
  static async import(snapshot: Uint8Array): Promise<MemoryBloomFilter> {
    const { parameters, payload } = decodeSnapshot(snapshot)
    return new MemoryBloomFilter(new MemoryBitStore(parameters, payload.slice()), await createKeyHasher(parameters.seed))
  }

  // add and has probe the bytes directly rather than through a PositionBatch: the same positions
  // as core's fillBlockedPositions / fillPositions (the conformance and equality tests hold them
  // to it), ~20 % faster, and a classic `has` stops at the first unset bit.

  override add(key: BloomKey): boolean {
    this.checkOpen()
    const hasher = this.hasher
    hasher.hash(key)
    const pair = hasher.pair
    return this.blocked ? this.addBlocked(pair[0], pair[1]) : this.addClassic(pair[0], pair[1])
  }

  override has(key: BloomKey): boolean {
    this.checkOpen()
    const hasher = this.hasher
    hasher.hash(key)
    const pair = hasher.pair
    return this.blocked ? this.hasBlocked(pair[0], pair[1]) : this.hasClassic(pair[0], pair[1])
  }

  // One small method per layout, so that add and has stay small enough for V8 to inline the hash.
  // `a` and `b` are the hasher's pair: the XXH32 bits read as signed; each use below takes only the bits.

  private addClassic(a: number, b: number): boolean {
    const { bytes, shardBits, hashes } = this
    const base = shardOf(a, b, this.shards) * this.shardBytes
    let x = a | 0
    let y = b | 0
    let added = 0
    for (let i = 0; i < hashes; i++) {
      const position = scaleToShard(x >>> 0, shardBits)
      const index = base + (position >>> 3)
      const mask = 0x80 >>> (position & 7)
      const old = bytes[index]
      added |= ~old & mask
      bytes[index] = old | mask
      x = (x + y) | 0
      y = (y + i + 1) | 0
    }
    return added !== 0
  }

  private hasClassic(a: number, b: number): boolean {
    const { bytes, shardBits, hashes } = this
    const base = shardOf(a, b, this.shards) * this.shardBytes
    let x = a | 0
    let y = b | 0
    for (let i = 0; i < hashes; i++) {
      const position = scaleToShard(x >>> 0, shardBits)
      if ((bytes[base + (position >>> 3)] & (0x80 >>> (position & 7))) === 0) return false
      x = (x + y) | 0
      y = (y + i + 1) | 0
    }
    return true
  }

  private addBlocked(a: number, b: number): boolean {
    const bytes = this.bytes
    const base = this.blockByte(a, b)
    const step = PROBE_STEP // read once: an exported binding is a cell V8 reloads and unboxes on every use
    let h = b | 0
    let added = 0
    for (let i = this.hashes; i > 0; i--) {
      const bit = h >>> 23
      const index = base + (bit >>> 3)
      const mask = 0x80 >>> (bit & 7)
      const old = bytes[index]
      added |= ~old & mask
      bytes[index] = old | mask
      h = Math.imul(h, step)
    }
    return added !== 0
  }

  private hasBlocked(a: number, b: number): boolean {
    const bytes = this.bytes
    const base = this.blockByte(a, b)
    // No early exit: the other probes are in the same cache line, so reading them all costs less
    // than the mispredicted branch an early exit takes on about every other absent key.
    const step = PROBE_STEP
    let missing = 0
    let h = b | 0
    for (let i = this.hashes; i > 0; i--) {
      const bit = h >>> 23
      missing |= ~bytes[base + (bit >>> 3)] & (0x80 >>> (bit & 7))
      h = Math.imul(h, step)
    }
    return missing === 0
  }

  /** The first byte of the key's block: its shard's start plus core's blockIndex, in bytes. */
  private blockByte(a: number, b: number): number {
    const block = blockIndex(a, this.blocks) * BLOCK_BYTES
    // shardOf returns 0 for one shard too, but V8 cannot fold 0 * shardBytes + block away.
    return this.shards === 1 ? block : shardOf(a, b, this.shards) * this.shardBytes + block
  }

  override addMany(keys: Iterable<BloomKey>): boolean[] {
    return answerEach(keys, (key) => this.add(key))
  }

  override hasMany(keys: Iterable<BloomKey>): boolean[] {
    return answerEach(keys, (key) => this.has(key))
  }

  /** Bytes held by the bits. */
  get byteLength(): number {
    return this.parameters.bits / 8
  }
}

/**
 * `answer` for each key, in order. An array's answers go into an array made at its final length: at
 * 100k keys that took a third off the time of pushing onto a growing one.
 */
export function answerEach(keys: Iterable<BloomKey>, answer: (key: BloomKey) => boolean): boolean[] {
  checkIterable(keys)
  if (Array.isArray(keys)) {
    const results = new Array<boolean>(keys.length)
    for (let i = 0; i < keys.length; i++) results[i] = answer(keys[i])
    return results
  }
  const results: boolean[] = []
  for (const key of keys) results.push(answer(key))
  return results
}

function checkIterable(keys: Iterable<BloomKey>): void {
  if (keys === null || typeof (keys as Iterable<BloomKey>)?.[Symbol.iterator] !== 'function') {
    throw new TypeError(`keys must be an iterable of strings or Uint8Arrays; got ${keys === null ? 'null' : typeof keys}`)
  }
}
