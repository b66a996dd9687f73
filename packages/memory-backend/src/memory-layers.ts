import type { FilterParameters } from '@bloomkit/core'
import { ArrayProbe, type LayerEntry, type LayerStorage, type StoredLayer } from '@bloomkit/core/store'
import { MemoryBitStore } from './memory-bit-store.js'

/**
 * A layered filter's storage in memory: the list is this array, each layer a `Uint8Array` with a
 * probe on it. One owner, so every reservation is granted and nothing can race.
 */
export class MemoryLayers implements LayerStorage<true> {
  readonly sync = true
  /** Replaced (never changed in place) whenever the list changes, as the port requires. */
  layers: readonly StoredLayer<true>[] = []
  private nextId = 1

  /** A layer of `parameters`, its bits a copy of `bytes` when given (into the store's aligned bytes). */
  static layer(entry: LayerEntry, parameters: FilterParameters, count: number, bytes?: Uint8Array): StoredLayer<true> {
    const store = new MemoryBitStore(parameters)
    if (bytes !== undefined) store.bytes.set(bytes)
    return { entry, store, count, probe: new ArrayProbe(store.parameters, store.bytes) }
  }

  /** Lists `layers` (an import's), in order. */
  adopt(layers: readonly StoredLayer<true>[]): this {
    this.layers = layers
    for (const layer of layers) this.nextId = Math.max(this.nextId, layer.entry.id + 1)
    return this
  }

  append(entry: Omit<LayerEntry, 'id'>, parameters: FilterParameters): StoredLayer<true> {
    const layer = MemoryLayers.layer({ id: this.nextId++, ...entry }, parameters, 0)
    this.layers = [...this.layers, layer]
    return layer
  }

  drop(gone: readonly StoredLayer<true>[]): void {
    this.layers = this.layers.filter((layer) => !gone.includes(layer))
    for (const layer of gone) layer.store.close()
  }

  reserve(_layer: StoredLayer<true>, want: number): number {
    return want
  }

  settle(layer: StoredLayer<true>, _reserved: number, added: number): void {
    layer.count += added
  }

  close(): void {
    for (const layer of this.layers) layer.store.close()
  }
}
