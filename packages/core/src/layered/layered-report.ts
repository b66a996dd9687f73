import { BloomFilter } from '../bloom-filter.js'
import type { KeyHasher } from '../hashing/key-hasher.js'
import { encodeLayeredSnapshot } from '../format/layered-snapshot.js'
import type { Steps } from './layered-steps.js'
import { compoundErrorRate, layerErrorRate, modelRate, type LayerInfo, type LayerPolicy } from './layer-policy.js'
import type { StoredLayer } from './layer-storage.js'

/** What core's LayeredFilter (layered-filter.ts) reports of its live layers: their infos, rate and snapshot. */

/** Each layer's {@link LayerInfo}, in the order given. */
export function layerInfos(policy: LayerPolicy, layers: readonly StoredLayer[]): LayerInfo[] {
  return layers.map((layer) => ({
    capacity: layer.entry.capacity,
    count: layer.count,
    errorRate: layerErrorRate(policy, layer.entry.index),
    expectedErrorRate: modelRate(layer.store.parameters, layer.entry.capacity),
    parameters: layer.store.parameters,
    window: layer.entry.window,
  }))
}

/** The compound false-positive rate of `layers` now, each layer's from its fill as a fixed filter computes it. */
export function* errorRateSteps(hasher: KeyHasher, layers: readonly StoredLayer[]): Steps<number> {
  const rates: number[] = []
  for (const layer of layers) rates.push((yield new BloomFilter(layer.store, hasher).errorRate()) as number)
  return compoundErrorRate(rates)
}

/**
 * The layered snapshot of `layers` (docs/SPEC.md, section 8), in window order as import requires,
 * even for a list that an earlier release's lagging writer appended out of order.
 */
export function* exportSteps(policy: LayerPolicy, hasher: KeyHasher, layers: readonly StoredLayer[]): Steps<Uint8Array> {
  const written = []
  for (const layer of [...layers].sort((x, y) => x.entry.window - y.entry.window)) {
    const snapshot = (yield new BloomFilter(layer.store, hasher).export()) as Uint8Array
    written.push({ window: layer.entry.window, count: layer.count, snapshot })
  }
  return encodeLayeredSnapshot(policy, written)
}
