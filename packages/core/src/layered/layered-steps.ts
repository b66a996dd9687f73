import { BloomError } from '../errors.js'
import type { KeyHasher, BloomKey } from '../hashing/key-hasher.js'
import { hashPairs, layerBatch } from './layered-batch.js'
import type { LayerPolicy } from './layer-policy.js'
import type { LayerStorage, StoredLayer } from './layer-storage.js'
import { SET_BITS, TEST_BITS, type BitMode } from '../bits/bit-kernels.js'
import { PositionBatch } from '../bits/position-batch.js'
import { positionsOf, shardOf } from '../bits/positions.js'

/** Helpers of core's LayeredFilter (layered-filter.ts): the sync/async step runner and per-layer probes. */

/** A method's body for {@link runSteps}: yields each store call's result and gets it back settled. */
export type Steps<T> = Generator<unknown, T, unknown>

/** In-place add/has of one key in one layer. */
export interface Probe {
  has(a: number, b: number): boolean
  add(a: number, b: number): boolean
}

/**
 * Whether a layer's `error` may mean that another process dropped the layer: its data is gone
 * (`BLOOM_DATA_LOST`), or the port released it on reading a list without it (`BLOOM_CLOSED`,
 * unless the filter itself was closed). Only the list read again tells (`LayerStorage.unlisted`).
 */
export function mayBeDropped(error: unknown, { filterClosed }: { readonly filterClosed: boolean }): boolean {
  return error instanceof BloomError && (error.code === 'BLOOM_DATA_LOST' || (error.code === 'BLOOM_CLOSED' && !filterClosed))
}

/** The keys of `pending` (indexes into the batch's hash pairs) that `layer` does not hold. */
export async function stillNew(layer: StoredLayer, pairs: Uint32Array, pending: number[]): Promise<number[]> {
  const out = new Uint8Array(pending.length)
  await layer.store.testBits(layerBatch(layer.store.parameters, pairs, pending), out)
  return pending.filter((_, slot) => out[slot] === 0)
}

/** How {@link runSteps} drives the steps: as a sync port's calls (`{ sync: true }`) or an async one's. A port itself fits. */
export interface Driving {
  readonly sync: boolean
}

/** Driving plain calls, and awaited ones (constants, so that no call allocates one). */
export const SYNC_STEPS: Driving = { sync: true }
export const ASYNC_STEPS: Driving = { sync: false }

/** Runs `steps`: sync, each yielded value handed straight back; async, each awaited (a rejection thrown into the generator). */
export function runSteps<T>(steps: Steps<T>, driving: Driving): T | Promise<T> {
  if (driving.sync) {
    let step = steps.next()
    while (step.done !== true) step = steps.next(step.value)
    return step.value
  }
  return (async () => {
    let step = steps.next()
    while (step.done !== true) {
      let value: unknown
      try {
        value = await step.value
      } catch (error) {
        step = steps.throw(error)
        continue
      }
      step = steps.next(value)
    }
    return step.value
  })()
}

/** A layer's in-place probe, or (a synchronous store without bytes of its own) one key at a time through its store. */
export function probeOf(layer: StoredLayer): Probe {
  if (layer.probe !== undefined) return layer.probe
  const store = layer.store
  const { shards, hashes } = store.parameters
  const shardBits = store.parameters.bits / shards
  const fill = positionsOf(store.parameters.scheme)
  const batch = new PositionBatch(1, hashes)
  const out = new Uint8Array(1)
  const one = (a: number, b: number, mode: BitMode): boolean => {
    batch.shards[0] = shardOf(a, b, shards)
    fill(a, b, shardBits, hashes, batch.positions, 0)
    batch.pairs[0] = a
    batch.pairs[1] = b
    batch.size = 1
    if (mode === SET_BITS) store.setBits(batch, out)
    else store.testBits(batch, out)
    return out[0] === 1
  }
  return { has: (a, b) => one(a, b, TEST_BITS), add: (a, b) => one(a, b, SET_BITS) }
}

/**
 * Refuses an add from a clock in window `clockWindow` when the filter is at `window` (the newest
 * listed layer's, another process's on a shared store, or a later reading of this filter's own
 * clock) and readers keep only windows from `window − keep + 1`: a clock that far behind is wrong,
 * and its keys would either go into a window no reader on time checks or outlive by `keep`
 * windows or more what its own clock promises (docs/SPEC.md 9.8). A lag of fewer windows adds
 * into `window`.
 * @throws BloomError `BLOOM_CLOCK_SKEW`.
 */
export function checkClock(policy: LayerPolicy, clockWindow: number, window: number): void {
  const oldest = window - policy.keep + 1
  if (clockWindow >= oldest) return
  throw new BloomError(
    'BLOOM_CLOCK_SKEW',
    `add: this process's clock is in window ${clockWindow}, but the filter is in window ${window} (its newest layer, or a later time its clock showed) and readers keep only windows ${oldest} to ${window} ` +
      `(windows of ${policy.seconds} s): ${policy.keep} or more windows behind. Fix this process's clock`,
  )
}

/**
 * found[i] = 1 where any of `layers` holds key i, with the keys' hash pairs (hashed once for every
 * layer): through the port's one-step check if it has one, else every layer's store at once.
 */
export async function foundIn(storage: LayerStorage, layers: readonly StoredLayer[], hasher: KeyHasher, keys: BloomKey[]): Promise<{ found: Uint8Array; pairs: Uint32Array }> {
  const pairs = hashPairs(hasher, keys)
  return { found: await foundForPairs(storage, layers, pairs, keys.length), pairs }
}

/** found[i] = 1 where any of `layers` holds the key whose pair is `pairs` [2i], [2i + 1], for `size` keys. */
export async function foundForPairs(storage: LayerStorage, layers: readonly StoredLayer[], pairs: Uint32Array, size: number): Promise<Uint8Array> {
  if (storage.testLayers !== undefined) return (await storage.testLayers(layers, pairs, size)).found
  const found = new Uint8Array(size)
  const answers = await Promise.all(
    layers.map(async (layer) => {
      const out = new Uint8Array(size)
      await layer.store.testBits(layerBatch(layer.store.parameters, pairs), out)
      return out
    }),
  )
  for (const out of answers) for (let i = 0; i < size; i++) found[i] |= out[i]
  return found
}
