import { CountingBloomFilter, type BloomKey, type FilterParametersInput, type SizingOptions } from '@bloomkit/core'
import { answerEach, checkOptionNames, CounterProbe, createKeyHasher, decodeSnapshot, KeyHasher, newFilterParameters, optionChecks } from '@bloomkit/core/store'
import { MemoryCounterStore } from './memory-counter-store.js'

/**
 * A counting Bloom filter in memory: `add`/`has`/`remove` and their batch forms, synchronous, no
 * Promise and no allocation per key. A 4-bit counter per position: memory is exactly
 * `bits / 2` bytes, 4× a plain filter of the same capacity and error rate.
 *
 * `remove` is for keys you added: removing a key that reads absent changes nothing and returns
 * false, but removing a never-added key that reads present (a false positive) decrements counters
 * of keys that were added, and can make them read absent. A counter that reaches 15 stays there.
 *
 * @example
 * const sessions = await CountingMemoryFilter.create({ capacity: 100_000, errorRate: 0.01 })
 * sessions.add('session:1') // true
 * sessions.remove('session:1') // true
 * sessions.has('session:1') // false
 */
export class CountingMemoryFilter extends CountingBloomFilter<true> {
  private readonly probe: CounterProbe

  /** Prefer {@link CountingMemoryFilter.create}; this adopts a store and a hasher made for its seed. */
  constructor(store: MemoryCounterStore, hasher: KeyHasher) {
    super(store, hasher)
    this.probe = new CounterProbe(store.parameters, store.bytes)
  }

  /**
   * A new, empty counting filter sized for `capacity` keys at `errorRate`, with the plain filter's
   * sizing, hashing and layout (see `sizeFilter` in core); counters take 4× the plain filter's bits.
   * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
   */
  static async create(options: SizingOptions): Promise<CountingMemoryFilter> {
    checkOptionNames('CountingMemoryFilter.create', options, ['sizing', 'counting'])
    optionChecks.checkCountingCreate(options)
    return CountingMemoryFilter.fromParameters(newFilterParameters(options).parameters)
  }

  /** A new, empty counting filter with explicit parameters (e.g. those of a filter you will merge with). */
  static async fromParameters(parameters: FilterParametersInput): Promise<CountingMemoryFilter> {
    checkOptionNames('CountingMemoryFilter.fromParameters', parameters, ['parameters'])
    const store = new MemoryCounterStore(parameters)
    return new CountingMemoryFilter(store, await createKeyHasher(store.parameters.seed))
  }

  /** Like {@link CountingMemoryFilter.fromParameters}, without waiting for xxhash-wasm (same hashes, pure JS). */
  static fromParametersSync(parameters: FilterParametersInput): CountingMemoryFilter {
    checkOptionNames('CountingMemoryFilter.fromParametersSync', parameters, ['parameters'])
    const store = new MemoryCounterStore(parameters)
    return new CountingMemoryFilter(store, new KeyHasher(store.parameters.seed))
  }

  /**
   * The filter in a counting snapshot (format version 3) from `export()` of any backend's counting
   * filter; checked whole before anything is built, and copied.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, or `BLOOM_UNSUPPORTED_VERSION` (a plain snapshot among them).
   */
  static async import(snapshot: Uint8Array): Promise<CountingMemoryFilter> {
    const { parameters, payload } = decodeSnapshot(snapshot, 'counting')
    return new CountingMemoryFilter(new MemoryCounterStore(parameters, payload.slice()), await createKeyHasher(parameters.seed))
  }

  /** Like {@link CountingMemoryFilter.import}, without waiting for xxhash-wasm. */
  static importSync(snapshot: Uint8Array): CountingMemoryFilter {
    const { parameters, payload } = decodeSnapshot(snapshot, 'counting')
    return new CountingMemoryFilter(new MemoryCounterStore(parameters, payload.slice()), new KeyHasher(parameters.seed))
  }

  // As MemoryBloomFilter: single keys go through the probe in place (the same counters as the
  // batch kernels; the tests hold them to it), batches key by key on the same path.

  protected override _addHashed(a: number, b: number): boolean {
    return this.probe.add(a, b)
  }

  protected override _hasHashed(a: number, b: number): boolean {
    return this.probe.has(a, b)
  }

  protected override _removeHashed(a: number, b: number): boolean {
    return this.probe.remove(a, b)
  }

  protected override _addMany(keys: Iterable<BloomKey>): boolean[] {
    return answerEach(keys, (key) => this.add(key))
  }

  protected override _hasMany(keys: Iterable<BloomKey>): boolean[] {
    return answerEach(keys, (key) => this.has(key))
  }

  protected override _removeMany(keys: Iterable<BloomKey>): boolean[] {
    return answerEach(keys, (key) => this.remove(key))
  }

  /** Bytes held by the counters: exactly `bits / 2` (4 bits per position). */
  get byteLength(): number {
    return this.parameters.bits / 2
  }
}
