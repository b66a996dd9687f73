import { BloomError, type BloomKey, type FilterParameters, type LayeredOptions, type LayerInfo, type RotatingOptions } from '@bloomkit/core'
import {
  ArrayProbe,
  compoundErrorRate,
  createKeyHasher,
  decodeLayeredSnapshot,
  encodeLayeredSnapshot,
  KeyHasher,
  layerCapacity,
  layeredMergeRefused,
  noJsonForm,
  layerErrorRate,
  layerParameters,
  layerPolicyOf,
  windowOf,
  type LayerPolicy,
} from '@bloomkit/core/store'
import { MemoryBitStore } from './memory-bit-store.js'
import { answerEach, MemoryBloomFilter } from './memory-bloom-filter.js'

/** One layer: an ordinary memory filter, and a probe on its bytes for the hot loops. */
class Layer {
  readonly filter: MemoryBloomFilter
  readonly bytes: Uint8Array
  /** Core's probe, the memory filter's own add/has kernels, over this layer's bytes. */
  readonly probe: ArrayProbe
  /** Keys that were new when added here. */
  count: number

  constructor(
    parameters: FilterParameters,
    hasher: KeyHasher,
    /** The layer's time window (rotating), 0 otherwise. */
    readonly window: number,
    /** Its index within its window: what its capacity and error rate follow from. */
    readonly index: number,
    /** New keys it takes before the next layer is added. */
    readonly capacity: number,
    count: number,
    bytes?: Uint8Array,
  ) {
    const store = new MemoryBitStore(parameters, bytes)
    this.filter = new MemoryBloomFilter(store, hasher)
    this.bytes = store.bytes
    this.probe = new ArrayProbe(parameters, store.bytes)
    this.count = count
  }
}

/**
 * A layered Bloom filter in memory: a list of ordinary memory filters that share one seed, so a
 * key is hashed once and each layer's positions follow from the same hash pair (docs/SPEC.md,
 * section 8). Synchronous, no allocation per key.
 *
 * - **Scalable** (`growth`): when the newest layer has taken its capacity of new keys, a layer
 *   `growth`× larger with a tighter error rate is added; the whole filter's false-positive rate
 *   stays below `errorRate` however far it grows.
 * - **Rotating** (`window`): keys go into the current time window's layer; `has` checks the last
 *   `keep` windows; older layers are dropped on the next call. A key added at time t is found until
 *   at least t + (keep − 1)·seconds and forgotten after t + keep·seconds at most.
 *
 * @example
 * const seen = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.01, growth: 2 })
 * seen.add('event:1') // true
 * seen.has('event:1') // true
 */
export class LayeredMemoryFilter {
  /** What decides the layers: kind, first capacity, error bound, growth, tightening, windows. */
  readonly policy: LayerPolicy
  private readonly hasher: KeyHasher
  private readonly clock: () => number
  private readonly rotating: boolean
  /** Oldest first. */
  private live: Layer[]
  /** The latest window seen (rotating): time never runs backwards for the filter. */
  private window = 0
  private closed = false

  private constructor(policy: LayerPolicy, hasher: KeyHasher, clock: () => number, layers: Layer[]) {
    this.policy = policy
    this.hasher = hasher
    this.clock = clock
    this.rotating = policy.kind === 'rotating'
    this.live = layers
    this.window = layers.length === 0 ? 0 : layers[layers.length - 1].window
    if (this.rotating) this.advance()
    else if (layers.length === 0) this.live = [this.newLayer(0, 0)]
  }

  /**
   * A new, empty layered filter. Prefer `MemoryBloomFilter.create`, which returns one when the
   * options have `growth` or `window`.
   * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
   */
  static async create(options: LayeredOptions): Promise<LayeredMemoryFilter> {
    const policy = layerPolicyOf(options)
    return new LayeredMemoryFilter(policy, await createKeyHasher(policy.seed), clockOf(options), [])
  }

  /** Like {@link LayeredMemoryFilter.create}, without waiting for xxhash-wasm (same hashes, pure JS). */
  static createSync(options: LayeredOptions): LayeredMemoryFilter {
    const policy = layerPolicyOf(options)
    return new LayeredMemoryFilter(policy, new KeyHasher(policy.seed), clockOf(options), [])
  }

  /**
   * The filter in a layered snapshot (format version 2) from `export()` of any backend. Every
   * layer is checked before anything is built; the bytes are copied. A rotating filter drops
   * layers whose windows have passed at once.
   * @param options `clock` for a rotating filter (default `Date.now`).
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT`, or `BLOOM_UNSUPPORTED_VERSION` (e.g. for a
   *   version-1 snapshot: import that with `MemoryBloomFilter.import`).
   */
  static async import(snapshot: Uint8Array, options: { clock?: () => number } = {}): Promise<LayeredMemoryFilter> {
    const decoded = decodeLayeredSnapshot(snapshot)
    return LayeredMemoryFilter.fromDecoded(decoded.policy, decoded.layers, await createKeyHasher(decoded.policy.seed), options)
  }

  /** Like {@link LayeredMemoryFilter.import}, without waiting for xxhash-wasm. */
  static importSync(snapshot: Uint8Array, options: { clock?: () => number } = {}): LayeredMemoryFilter {
    const decoded = decodeLayeredSnapshot(snapshot)
    return LayeredMemoryFilter.fromDecoded(decoded.policy, decoded.layers, new KeyHasher(decoded.policy.seed), options)
  }

  private static fromDecoded(
    policy: LayerPolicy,
    layers: ReturnType<typeof decodeLayeredSnapshot>['layers'],
    hasher: KeyHasher,
    options: { clock?: () => number },
  ): LayeredMemoryFilter {
    let index = 0
    const built = layers.map((layer, i) => {
      index = i > 0 && layers[i - 1].window === layer.window ? index + 1 : 0
      return new Layer(layer.parameters, hasher, layer.window, index, layerCapacity(policy, index), layer.count, layer.payload.slice())
    })
    return new LayeredMemoryFilter(policy, hasher, clockOf(options), built)
  }

  /** Whether methods return plain values: always, in memory. */
  get isSync(): true {
    return true
  }

  /** Whether {@link close} was called. */
  get isClosed(): boolean {
    return this.closed
  }

  /**
   * Adds a key: true if it was new. A key that any live layer holds (or seems to: a false
   * positive) answers false and writes nothing; otherwise it goes into the newest layer (of the
   * current window), a new layer being added first when that one is full.
   * @throws BloomError `BLOOM_INVALID_KEY`, `BLOOM_CLOSED`.
   */
  add(key: BloomKey): boolean {
    this.checkOpen()
    if (this.rotating) this.advance()
    const hasher = this.hasher
    hasher.hash(key)
    const a = hasher.pair[0]
    const b = hasher.pair[1]
    const live = this.live
    for (let i = live.length - 1; i >= 0; i--) if (live[i].probe.has(a, b)) return false
    const layer = this.writable()
    layer.probe.add(a, b)
    layer.count++
    return true
  }

  /** Whether any live layer may hold the key; false means it was definitely not added (or was forgotten). */
  has(key: BloomKey): boolean {
    this.checkOpen()
    if (this.rotating) this.advance()
    const hasher = this.hasher
    hasher.hash(key)
    const a = hasher.pair[0]
    const b = hasher.pair[1]
    const live = this.live
    // Newest first: the newest layer is the largest and holds most keys.
    for (let i = live.length - 1; i >= 0; i--) if (live[i].probe.has(a, b)) return true
    return false
  }

  /** {@link add} for each key, in order. */
  addMany(keys: Iterable<BloomKey>): boolean[] {
    return answerEach(keys, (key) => this.add(key))
  }

  /** {@link has} for each key, in order. */
  hasMany(keys: Iterable<BloomKey>): boolean[] {
    return answerEach(keys, (key) => this.has(key))
  }

  /** Keys that were new when added, over the live layers (exact, not estimated from bits). */
  estimateCount(): number {
    this.checkOpen()
    if (this.rotating) this.advance()
    let total = 0
    for (const layer of this.live) total += layer.count
    return total
  }

  /**
   * The false-positive probability of a `has` now: 1 − Π(1 − rate_i) over the live layers, each
   * layer's rate from its current fill as a fixed filter computes it.
   */
  errorRate(): number {
    this.checkOpen()
    if (this.rotating) this.advance()
    return compoundErrorRate(this.live.map((layer) => layer.filter.errorRate()))
  }

  /** Each live layer, oldest first: capacity, count, the error rate it is sized for, parameters, window. */
  layers(): LayerInfo[] {
    this.checkOpen()
    if (this.rotating) this.advance()
    return this.live.map((layer) => ({
      capacity: layer.capacity,
      count: layer.count,
      errorRate: layerErrorRate(this.policy, layer.index),
      parameters: layer.filter.parameters,
      window: layer.window,
    }))
  }

  /** Bytes held by the live layers' bits. */
  get byteLength(): number {
    let total = 0
    for (const layer of this.live) total += layer.bytes.length
    return total
  }

  /** Drops every layer: the filter is as new (a scalable one with an empty first layer). */
  clear(): void {
    this.checkOpen()
    for (const layer of this.live) layer.filter.close()
    this.live = this.rotating ? [] : [this.newLayer(0, 0)]
  }

  /** Throws a TypeError: a filter has no JSON form; use {@link export} (see `noJsonForm` in core). */
  toJSON(): never {
    throw noJsonForm()
  }

  /** Refused: see `layeredMergeRefused` in core. */
  merge(_other: unknown): never {
    this.checkOpen()
    throw layeredMergeRefused()
  }

  /** The layered snapshot (docs/SPEC.md, section 8): the policy, then each live layer's record and version-1 snapshot. */
  export(): Uint8Array {
    this.checkOpen()
    if (this.rotating) this.advance()
    return encodeLayeredSnapshot(
      this.policy,
      this.live.map((layer) => ({ window: layer.window, count: layer.count, snapshot: layer.filter.export() })),
    )
  }

  /** Releases the layers; idempotent. Later calls throw `BLOOM_CLOSED`. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const layer of this.live) layer.filter.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.close()
  }

  private checkOpen(): void {
    if (this.closed) throw new BloomError('BLOOM_CLOSED', 'the filter is closed')
  }

  /** Moves to the clock's window and drops layers of windows that have passed. */
  private advance(): void {
    const window = windowOf(this.policy, this.clock())
    if (window <= this.window) return
    this.window = window
    const oldest = this.window - this.policy.keep + 1
    if (this.live.length > 0 && this.live[0].window < oldest) {
      const kept = this.live.filter((layer) => layer.window >= oldest)
      for (const layer of this.live) if (layer.window < oldest) layer.filter.close()
      this.live = kept
    }
  }

  /** The layer a new key goes into: the newest (of the current window), after growing if it is full. */
  private writable(): Layer {
    const live = this.live
    const newest = live.length === 0 ? undefined : live[live.length - 1]
    const window = this.rotating ? this.window : 0
    if (newest === undefined || newest.window !== window) {
      const layer = this.newLayer(window, 0)
      live.push(layer)
      return layer
    }
    if (newest.count < newest.capacity || this.policy.growth === 0) return newest
    const layer = this.newLayer(window, newest.index + 1)
    live.push(layer)
    return layer
  }

  private newLayer(window: number, index: number): Layer {
    return new Layer(layerParameters(this.policy, index), this.hasher, window, index, layerCapacity(this.policy, index), 0)
  }
}

function clockOf(options: LayeredOptions | { clock?: () => number }): () => number {
  return (options as RotatingOptions).clock ?? Date.now
}
