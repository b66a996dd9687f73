import type { BitStore, Outcome } from '../bit-store.js'
import { layerCapacity, type LayerPolicy } from './layer-policy.js'
import type { SnapshotLayer } from '../format/layered-snapshot.js'
import type { FilterParameters } from '../parameters.js'
import type { ArrayProbe } from '../bits/probe.js'
import { SNAPSHOT_HEADER_BYTES, SNAPSHOT_TRAILER_BYTES } from '../format/snapshot.js'

/**
 * The storage port of a layered filter: what a backend supplies so that core's
 * {@link LayeredFilter} can run on it (as abstract-level lets a store supply only `_get`/`_put`).
 * Core decides everything else: the window, which layer takes a key and how large the next one
 * is, hashing once for every layer, combining answers, snapshots and refusals.
 */

/** What core needs besides the port: the clock of a rotating filter, and per-backend limits. */
export interface LayeredFilterOptions {
  /** Milliseconds since the Unix epoch (rotating filters). Default: `Date.now`. */
  readonly clock?: () => number
  /** Keys hashed per store round trip by an asynchronous filter's `addMany`/`hasMany`. Default: 16 384. */
  readonly batchKeys?: number
  /**
   * The most bits a new layer's shard may hold, unless the policy fixes `shards` (Redis keeps a
   * shard at 4 MiB, as a fixed Redis filter). Default: core's sizing decides.
   */
  readonly maxShardBits?: number
}

/** One listed layer. */
export interface LayerEntry {
  /** The backend's name for it (a LevelDB folder `L<id>`, a Redis filter `<name>:L<id>`). */
  readonly id: number
  /** Its time window (rotating), 0 for a scalable filter. */
  readonly window: number
  /** Its place within its window: what its error rate follows from. */
  readonly index: number
  /** New keys it takes before the next layer is added. */
  readonly capacity: number
}

/** A layer as the port holds it: its entry, its bits, and its count of new keys as last read or settled. */
export interface StoredLayer<Sync extends boolean = boolean> {
  readonly entry: LayerEntry
  readonly store: BitStore<Sync>
  /** Keys that were new when added here, as this process last read or settled it. */
  count: number
  /** In-place add/has on the layer's bytes (synchronous stores that hold a `Uint8Array`): the per-key hot path. */
  readonly probe?: ArrayProbe
}

/** Why {@link LayerStorage.drop} is called: windows that have passed, or `clear`. */
export type DropReason = 'passed' | 'cleared'

/** What a port's {@link LayerStorage.testLayers} answers. */
export interface LayersAnswer {
  /** found[i] = 1 where a layer holds key i. */
  readonly found: Uint8Array
}

/** The storage port. Every method may lose a race to another process where the list is shared (Redis). */
export interface LayerStorage<Sync extends boolean = boolean> {
  /** Whether its methods return plain values (memory) or Promises. */
  readonly sync: Sync
  /** The layers as this process knows them, oldest first (no I/O). */
  readonly layers: readonly StoredLayer<Sync>[]
  /**
   * Lists a new layer after the newest and makes its bits: the new layer, or undefined when the
   * list moved since this process read it (another process grew it); `layers` is then the list as
   * it is now, and core decides again.
   */
  append(entry: Omit<LayerEntry, 'id'>, parameters: FilterParameters): Outcome<Sync, StoredLayer<Sync> | undefined>
  /**
   * Unlists `gone` and releases them: layers of windows that have passed (`'passed'`; a shared
   * store may leave their data to expire, since a process whose clock is a little behind may
   * still be reading them), or every layer for `clear` (`'cleared'`: their data goes).
   */
  drop(gone: readonly StoredLayer<Sync>[], reason: DropReason): Outcome<Sync, void>
  /**
   * Reserves room for up to `want` new keys in `layer` before they are written: how many it may
   * take (0 when racing writers filled it; `layer.count` then says it is full). Called only for
   * layers that grow; a store with one writer grants `want`.
   */
  reserve(layer: StoredLayer<Sync>, want: number): Outcome<Sync, number>
  /**
   * After writing a batch into `layer`: `added` of its keys were new. `wanted` is the `want` that
   * {@link reserve} was asked for this batch (0 when the layer does not grow and nothing was
   * reserved): what of it was not used is given back.
   */
  settle(layer: StoredLayer<Sync>, wanted: number, added: number): Outcome<Sync, void>
  /**
   * Optional: reads the list and the layers' counts again (a store shared by processes), before
   * core reports on the layers (`layers`, `estimateCount`, `errorRate`, `export`).
   */
  refresh?(): Outcome<Sync, void>
  /**
   * Optional: answers for `keys` (their hash pairs, a at [2i], b at [2i + 1]) over every layer in
   * `layers` in one step of the store's (Redis: one script), including layers another process
   * listed meanwhile. Without it, core asks each layer's store at once and combines.
   */
  testLayers?(layers: readonly StoredLayer<Sync>[], pairs: Uint32Array, keys: number): Promise<LayersAnswer>
  /**
   * Optional, for a list shared by processes (Redis): reads the list again (as {@link refresh}) and
   * answers whether any of `layers` has left it. Core asks when a call on one of them failed with
   * `BLOOM_DATA_LOST` (or `BLOOM_CLOSED`: a port releases a layer once it reads a list without it).
   * A layer another process unlisted (a rebuild, a passed window, `clear`) took its keys with it,
   * and core judges them again over the list as it is now; a layer still listed has lost its data,
   * and the error stands (docs/SPEC.md 9.8, 9.9).
   */
  unlisted?(layers: readonly StoredLayer<Sync>[]): Promise<boolean>
  /** Releases the layers and whatever holds the list; core calls it once. */
  close(): Outcome<Sync, void>
}

/**
 * The entries of a decoded layered snapshot's layers, ids from 1: each layer's index within its
 * window follows from the windows, and its capacity from the policy. For a port's `import`.
 */
export function snapshotLayerEntries(policy: LayerPolicy, layers: readonly SnapshotLayer[]): LayerEntry[] {
  const entries: LayerEntry[] = []
  for (const [i, layer] of layers.entries()) {
    const index = i > 0 && layers[i - 1].window === layer.window ? entries[i - 1].index + 1 : 0
    entries.push({ id: i + 1, window: layer.window, index, capacity: layerCapacity(policy, index) })
  }
  return entries
}

/**
 * The version-1 snapshot of one layer inside a layered snapshot (a view, no copy): the decoded
 * layer's payload is a view into `snapshot`, between its header and its CRC-32.
 */
export function layerSnapshotOf(snapshot: Uint8Array, layer: SnapshotLayer): Uint8Array {
  const start = layer.payload.byteOffset - snapshot.byteOffset - SNAPSHOT_HEADER_BYTES
  return snapshot.subarray(start, start + SNAPSHOT_HEADER_BYTES + layer.payload.length + SNAPSHOT_TRAILER_BYTES)
}
