import { BloomError, type FilterParameters } from '@bloomkit/core'
import { sameParameters, type BitStore, type BitStoreCapabilities, type PositionBatch } from '@bloomkit/core/store'
import { LevelBitStore } from '../level-bit-store.js'
import { Mutex } from '../mutex.js'
import type { LevelStoreOptions } from '../options.js'

/**
 * Layers open at once, at most. Each is a LevelDB of its own, holding ~5 file descriptors (LOCK,
 * LOG, MANIFEST, the .log, the anchor) plus its tables: 4,000 layers open together ran out of file
 * descriptors (EMFILE, issue 21). A filter with more layers keeps this many open, the most
 * recently used, and opens the others when a call reaches them (each costs an open and a close).
 */
export const MAX_OPEN_LAYERS = 128

/**
 * The layers of one layered filter that are open, at most `max` at once, least recently used
 * closed first; a layer in use by a call is never closed under it.
 */
export class LayerPool {
  /** Open layers, least recently used first (a Map keeps insertion order). */
  private readonly open = new Map<PooledLayer, LevelBitStore>()
  private readonly busy = new Map<PooledLayer, number>()
  /** Opening and closing run one at a time; calls on open layers do not wait for it. */
  private readonly mutex = new Mutex()
  private waiting: (() => void)[] = []

  constructor(
    private readonly options: LevelStoreOptions,
    readonly max = MAX_OPEN_LAYERS,
  ) {}

  /** Whether another layer can be kept open now without closing one. */
  get full(): boolean {
    return this.open.size >= this.max
  }

  /** A layer at `location` with these parameters, `store` already open or (undefined) opened on first use. */
  layer(location: string, parameters: FilterParameters, store?: LevelBitStore): PooledLayer {
    const layer = new PooledLayer(this, location, parameters)
    if (store !== undefined) this.open.set(layer, store)
    return layer
  }

  /** Runs `body` on the layer's store, opened (closing the least recently used idle one) if need be. */
  async use<T>(layer: PooledLayer, body: (store: LevelBitStore) => Promise<T>): Promise<T> {
    // Marked busy in the same step that finds or opens it, so that no eviction can come between.
    let store = this.open.get(layer)
    if (store === undefined) {
      store = await this.mutex.run(() => this.openLayer(layer))
    } else {
      this.busy.set(layer, (this.busy.get(layer) ?? 0) + 1)
      // Most recently used last.
      this.open.delete(layer)
      this.open.set(layer, store)
    }
    try {
      return await body(store)
    } finally {
      const left = this.busy.get(layer)! - 1
      if (left === 0) this.busy.delete(layer)
      else this.busy.set(layer, left)
      for (const wake of this.waiting.splice(0)) wake()
    }
  }

  /** The layer's store if it is open. */
  opened(layer: PooledLayer): LevelBitStore | undefined {
    return this.open.get(layer)
  }

  /** Closes the layer's store if it is open (after the calls using it). */
  async close(layer: PooledLayer): Promise<void> {
    await this.mutex.run(async () => {
      const store = this.open.get(layer)
      if (store === undefined) return
      while (this.busy.has(layer)) await new Promise<void>((wake) => this.waiting.push(wake))
      this.open.delete(layer)
      await store.close()
    })
  }

  /** Opens the layer's store (or finds it opened meanwhile) and marks it busy. */
  private async openLayer(layer: PooledLayer): Promise<LevelBitStore> {
    const already = this.open.get(layer)
    if (already !== undefined) {
      this.busy.set(layer, (this.busy.get(layer) ?? 0) + 1)
      return already
    }
    while (this.full) {
      const idle = [...this.open.keys()].find((open) => !this.busy.has(open))
      if (idle === undefined) {
        await new Promise<void>((wake) => this.waiting.push(wake))
        continue
      }
      const store = this.open.get(idle)!
      this.open.delete(idle)
      await store.close()
    }
    const store = await LevelBitStore.open(layer.location, this.options).catch((error: unknown) => {
      if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') {
        throw new BloomError('BLOOM_DATA_LOST', `${layer.location}: this listed layer is gone; import a snapshot or create the filter anew`, { cause: error })
      }
      throw error
    })
    if (!sameParameters(store.parameters, layer.parameters)) {
      await store.close()
      throw new BloomError('BLOOM_CORRUPT_STORE', `${layer.location}: the layer's parameters differ from those the layered manifest lists for it`)
    }
    this.open.set(layer, store)
    this.busy.set(layer, 1)
    return store
  }
}

/** One layer as core sees it: a `BitStore` whose LevelDB the pool opens when a call needs it. */
export class PooledLayer implements BitStore<false> {
  readonly capabilities: BitStoreCapabilities & { readonly sync: false } = { sync: false, persistent: true, shared: false }

  constructor(
    private readonly pool: LayerPool,
    readonly location: string,
    readonly parameters: FilterParameters,
  ) {}

  setBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.pool.use(this, (store) => store.setBits(batch, out))
  }

  testBits(batch: PositionBatch, out: Uint8Array): Promise<void> {
    return this.pool.use(this, (store) => store.testBits(batch, out))
  }

  countBits(): Promise<ArrayLike<number>> {
    return this.pool.use(this, (store) => store.countBits())
  }

  readShard(shard: number, offset: number, length: number): Promise<Uint8Array> {
    return this.pool.use(this, (store) => store.readShard(shard, offset, length))
  }

  writeShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.pool.use(this, (store) => store.writeShard(shard, offset, bytes))
  }

  orShard(shard: number, offset: number, bytes: Uint8Array): Promise<void> {
    return this.pool.use(this, (store) => store.orShard(shard, offset, bytes))
  }

  clear(): Promise<void> {
    return this.pool.use(this, (store) => store.clear())
  }

  /** Writes the layer's changed pages, if it is open (a closed layer has none). */
  async flush(): Promise<void> {
    await this.pool.opened(this)?.flush()
  }

  close(): Promise<void> {
    return this.pool.close(this)
  }
}
