import {
  BloomFilter,
  checkParameters,
  createKeyHasher,
  decodeSnapshot,
  sizeFilter,
  type FilterParameters,
  type SizingOptions,
} from '@bloomkit/core'
import { MemoryBitStore } from './memory-bit-store.js'

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
  /**
   * A new, empty filter sized for `capacity` keys at `errorRate` (see `sizeFilter` in core).
   * Async only because xxhash-wasm compiles once per process; where WebAssembly is forbidden it
   * falls back to the bit-identical pure-JS hash.
   * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
   */
  static async create(options: SizingOptions): Promise<MemoryBloomFilter> {
    return MemoryBloomFilter.fromParameters(sizeFilter(options))
  }

  /** A new, empty filter with explicit parameters (e.g. those of a filter you will merge with). */
  static async fromParameters(parameters: FilterParameters): Promise<MemoryBloomFilter> {
    const checked = checkParameters(parameters)
    return new MemoryBloomFilter(new MemoryBitStore(checked), await createKeyHasher(checked.seed))
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

  /** Bytes held by the bits. */
  get byteLength(): number {
    return this.parameters.bits / 8
  }
}
