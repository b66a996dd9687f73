import { LayeredFilter, type LayeredOptions, type RotatingOptions } from '@bloomkit/core'
import { checkOptionNames, createKeyHasher, KeyHasher, layeredFormat, type LayerPolicy, layerPolicies } from '@bloomkit/core/store'
import { MemoryBloomFilter } from './memory-bloom-filter.js'
import { MemoryLayers } from './memory-layers.js'

const { layerPolicyOf } = layerPolicies

const { decodeLayeredSnapshot, snapshotLayerEntries, snapshotVersionOf } = layeredFormat

/** Options of {@link LayeredMemoryFilter.import}. */
export interface LayeredMemoryImportOptions {
  /** Milliseconds since the Unix epoch, for a rotating filter. Default: `Date.now`. */
  readonly clock?: () => number
}

/**
 * A layered Bloom filter in memory (core's {@link LayeredFilter} over `Uint8Array` layers):
 * synchronous, no allocation per key. Imported from `@bloomkit/memory-backend/layered`, so that a
 * fixed filter's bundle carries none of it.
 *
 * - **Scalable** (`growth`): when the newest layer has taken its capacity of new keys, a layer
 *   `growth`× larger with a tighter error rate is added; the whole filter's false-positive rate
 *   stays below `errorRate` however far it grows.
 * - **Rotating** (`window`): keys go into the current time window's layer; `has` checks the last
 *   `keep` windows; older layers are dropped on the next call. A key added at time t is found until
 *   at least t + (keep − 1)·seconds and forgotten after t + keep·seconds at most.
 *
 * @example
 * const seen = await LayeredMemoryFilter.create({ capacity: 10_000, errorRate: 0.01, growth: 2 })
 * seen.add('event:1') // true
 * seen.has('event:1') // true
 */
export class LayeredMemoryFilter extends LayeredFilter<true> {
  /**
   * A new, empty layered filter (a scalable one with its first layer).
   * Async only because xxhash-wasm compiles once per process.
   * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
   */
  static async create(options: LayeredOptions): Promise<LayeredMemoryFilter> {
    checkOptionNames('LayeredMemoryFilter.create', options, ['sizing', 'layered'])
    const policy = layerPolicyOf(options)
    return LayeredMemoryFilter.empty(policy, options, await createKeyHasher(policy.seed))
  }

  /** Like {@link LayeredMemoryFilter.create}, without waiting for xxhash-wasm (same hashes, pure JS). */
  static createSync(options: LayeredOptions): LayeredMemoryFilter {
    checkOptionNames('LayeredMemoryFilter.createSync', options, ['sizing', 'layered'])
    const policy = layerPolicyOf(options)
    return LayeredMemoryFilter.empty(policy, options, new KeyHasher(policy.seed))
  }

  /**
   * The filter in a snapshot from `export()` of any backend: a layered one (format version 2) as a
   * `LayeredMemoryFilter`, a fixed one (version 1) as a `MemoryBloomFilter`; tell them apart by
   * `kind`. Every layer is checked before anything is built; the bytes are copied. A rotating
   * filter drops layers whose windows have passed at once.
   * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` or `BLOOM_UNSUPPORTED_VERSION`.
   */
  static async import(snapshot: Uint8Array, options: LayeredMemoryImportOptions = {}): Promise<LayeredMemoryFilter | MemoryBloomFilter> {
    checkOptionNames('LayeredMemoryFilter.import', options, ['clock'])
    if (snapshotVersionOf(snapshot) === 1) return MemoryBloomFilter.import(snapshot)
    const decoded = decodeLayeredSnapshot(snapshot)
    return LayeredMemoryFilter.fromDecoded(decoded, await createKeyHasher(decoded.policy.seed), options)
  }

  /** Like {@link LayeredMemoryFilter.import}, without waiting for xxhash-wasm. */
  static importSync(snapshot: Uint8Array, options: LayeredMemoryImportOptions = {}): LayeredMemoryFilter | MemoryBloomFilter {
    checkOptionNames('LayeredMemoryFilter.importSync', options, ['clock'])
    if (snapshotVersionOf(snapshot) === 1) return MemoryBloomFilter.importSync(snapshot)
    const decoded = decodeLayeredSnapshot(snapshot)
    return LayeredMemoryFilter.fromDecoded(decoded, new KeyHasher(decoded.policy.seed), options)
  }

  /** `policy` is `layerPolicyOf(options)`, made once: without a seed it holds a random one. */
  private static empty(policy: LayerPolicy, options: LayeredOptions, hasher: KeyHasher): LayeredMemoryFilter {
    const filter = new LayeredMemoryFilter(policy, new MemoryLayers(), hasher, { clock: (options as RotatingOptions).clock })
    // A scalable filter starts with its first layer, so that `layers()` shows its capacity at once.
    if (policy.kind === 'scalable') filter.clear()
    return filter
  }

  private static fromDecoded(decoded: ReturnType<typeof decodeLayeredSnapshot>, hasher: KeyHasher, options: LayeredMemoryImportOptions): LayeredMemoryFilter {
    const entries = snapshotLayerEntries(decoded.policy, decoded.layers)
    const layers = decoded.layers.map((layer, i) => MemoryLayers.layer(entries[i], layer.parameters, layer.count, layer.payload))
    return new LayeredMemoryFilter(decoded.policy, new MemoryLayers().adopt(layers), hasher, { clock: options.clock })
  }
}
