import { BloomError, BloomFilter, type BloomKey, type FilterParameters, type FilterParametersInput, type SizingOptions } from '@bloomkit/core'
import { answerEach, ArrayProbe, checkOptionNames, createKeyHasher, decodeSnapshot, isLayeredOptions, KeyHasher, newFilterParameters, SET_BITS, TEST_BITS, type BitMode } from '@bloomkit/core/store'
import { MemoryBitStore } from './memory-bit-store.js'

/** Keys per chunk of addMany/hasMany: hashed together, then probed together. */
const MANY_CHUNK = 256

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
  /** A fixed filter (a counting one is a `Counting…Filter`, a layered one a `Layered…Filter`). */
  declare readonly kind: 'fixed'
  /** Sets and tests bits in place; see {@link _addHashed}. */
  private readonly probe: ArrayProbe
  /** addMany/hasMany's per-chunk arrays, made on first use. */
  private scratch: { pairs: Int32Array; starts: Int32Array; out: Uint8Array } | undefined

  /** Prefer {@link MemoryBloomFilter.create}; this adopts a store and a hasher made for its seed. */
  constructor(store: MemoryBitStore, hasher: KeyHasher) {
    super(store, hasher)
    this.probe = new ArrayProbe(store.parameters, store.bytes)
  }

  /**
   * A new, empty filter sized for `capacity` keys at `errorRate` (see `sizeFilter` in core).
   * Filters that grow or forget (`growth`, `window`) are made by `LayeredMemoryFilter.create` from
   * `@bloomkit/memory-backend/layered`, so that this entry carries no layered code.
   * Async only because xxhash-wasm compiles once per process; where WebAssembly is forbidden it
   * falls back to the bit-identical pure-JS hash.
   * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range (and, for
   *   `growth` or `window`, the layered entry).
   */
  static async create(options: SizingOptions): Promise<MemoryBloomFilter> {
    checkOptionNames('MemoryBloomFilter.create', options, ['sizing', 'layered', 'counting'])
    // Counting and layered filters come from their own entries, so that this one's bundle stays lean.
    // (`counting` is a boolean by now: checkOptionNames refused 1, 'yes' and null.)
    if ((options as { counting?: boolean }).counting === true) {
      throw new BloomError('BLOOM_INVALID_PARAMETER', "counting: use CountingMemoryFilter from '@bloomkit/memory-backend/counting'")
    }
    if (isLayeredOptions(options)) {
      throw new BloomError(
        'BLOOM_INVALID_PARAMETER',
        "growth, window, tightening and clock make a layered filter: use LayeredMemoryFilter.create from '@bloomkit/memory-backend/layered'",
      )
    }
    // Without `seed`, a random secret one (keyed hashing by default; see core's randomSeed).
    return MemoryBloomFilter.fromParameters(newFilterParameters(options).parameters)
  }

  /** A new, empty filter with explicit parameters (e.g. those of a filter you will merge with). */
  static async fromParameters(parameters: FilterParametersInput): Promise<MemoryBloomFilter> {
    checkOptionNames('MemoryBloomFilter.fromParameters', parameters, ['parameters'])
    const store = new MemoryBitStore(parameters)
    return new MemoryBloomFilter(store, await createKeyHasher(store.parameters.seed))
  }

  /**
   * Like {@link MemoryBloomFilter.fromParameters}, without waiting for xxhash-wasm: for code that
   * cannot await. Keys hash with the pure-JS XXH32 (identical results; slower only for keys of
   * 128 bytes and more) until a later async `create` has loaded WebAssembly.
   */
  static fromParametersSync(parameters: FilterParametersInput): MemoryBloomFilter {
    checkOptionNames('MemoryBloomFilter.fromParametersSync', parameters, ['parameters'])
    const store = new MemoryBitStore(parameters)
    return new MemoryBloomFilter(store, new KeyHasher(store.parameters.seed))
  }

  /** Like {@link MemoryBloomFilter.import}, without waiting for xxhash-wasm (see {@link fromParametersSync}). */
  static importSync(snapshot: Uint8Array): MemoryBloomFilter {
    const { parameters, payload } = decodeSnapshot(snapshot)
    return new MemoryBloomFilter(copyOf(parameters, payload), new KeyHasher(parameters.seed))
  }

  /**
   * The filter in a snapshot from `export()` of any backend. The bytes are checked (length,
   * header and payload CRC-32) before anything is built, and copied.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` or `BLOOM_UNSUPPORTED_VERSION` (a layered snapshot:
   *   import it with `LayeredMemoryFilter.import` from `@bloomkit/memory-backend/layered`).
   */
  static async import(snapshot: Uint8Array): Promise<MemoryBloomFilter> {
    const { parameters, payload } = decodeSnapshot(snapshot)
    return new MemoryBloomFilter(copyOf(parameters, payload), await createKeyHasher(parameters.seed))
  }

  // The hooks: add and has set and test the bytes in place rather than through a PositionBatch:
  // the same bits (the tests hold them to it), ~20 % faster, and a classic `has` stops at the
  // first unset bit. addMany and hasMany of an array take the same bits in two passes per chunk.

  protected override _addHashed(a: number, b: number): boolean {
    return this.probe.add(a, b)
  }

  protected override _hasHashed(a: number, b: number): boolean {
    return this.probe.has(a, b)
  }

  protected override _addMany(keys: Iterable<BloomKey>): boolean[] {
    return Array.isArray(keys) ? this.probeMany(SET_BITS, keys) : answerEach(keys, (key) => this.add(key))
  }

  protected override _hasMany(keys: Iterable<BloomKey>): boolean[] {
    return Array.isArray(keys) ? this.probeMany(TEST_BITS, keys) : answerEach(keys, (key) => this.has(key))
  }

  /**
   * An array of keys, a chunk at a time: hash the chunk's keys, then add or check them together
   * (ArrayProbe.many), so that their cache misses overlap. The scratch arrays are the filter's own,
   * made once (sync calls cannot overlap).
   */
  private probeMany(mode: BitMode, keys: readonly BloomKey[]): boolean[] {
    const scratch = (this.scratch ??= { pairs: new Int32Array(2 * MANY_CHUNK), starts: new Int32Array(MANY_CHUNK), out: new Uint8Array(MANY_CHUNK) })
    const { pairs, starts, out } = scratch
    const hasher = this.hasher
    const probe = this.probe
    const blocked = probe.blocked
    const results = new Array<boolean>(keys.length)
    for (let from = 0; from < keys.length; from += MANY_CHUNK) {
      const count = Math.min(MANY_CHUNK, keys.length - from)
      // The chunk's keys hashed in one pass (encoded once where they are ASCII strings; issue 36).
      hasher.hashMany(keys, from, count, pairs)
      for (let i = 0; i < count; i++) {
        starts[i] = blocked ? probe.blockByte(pairs[2 * i], pairs[2 * i + 1]) : probe.firstByte(pairs[2 * i], pairs[2 * i + 1])
      }
      probe.many(mode, pairs, count, starts, out)
      for (let i = 0; i < count; i++) results[from + i] = out[i] === 1
    }
    return results
  }

  /** Bytes held by the bits. */
  get byteLength(): number {
    return this.parameters.bits / 8
  }
}

/** A store holding a copy of `payload`, in bytes of its own making (aligned; see MemoryBitStore). */
function copyOf(parameters: FilterParameters, payload: Uint8Array): MemoryBitStore {
  const store = new MemoryBitStore(parameters)
  store.bytes.set(payload)
  return store
}
