import { layerBatch } from './layered-batch.js'
import { foundForPairs, mayBeDropped, stillNew } from './layered-steps.js'
import type { LayerStorage, StoredLayer } from './layer-storage.js'

/**
 * The asynchronous add of one batch of a layered filter (core's LayeredFilter, docs/SPEC.md 8 and
 * 9.8 "Adding"), over a list that other processes may change while the batch is judged and written.
 */

/** What {@link unlessDropped} answers for a call on a layer that another process unlisted. */
const DROPPED = Symbol('dropped')

/** What {@link addBatch} needs from its filter. */
export interface AddContext {
  readonly storage: LayerStorage<false>
  /** The policy's growth: 0 when layers take keys without reserving room first. */
  readonly growth: number
  /** Whether the filter was closed (a layer's `BLOOM_CLOSED` is then the filter's, not a dropped layer's). */
  isClosed(): boolean
  /** The layers keys are judged against now (9.8, adding step 1), from the list as last read. */
  judged(): readonly StoredLayer<false>[]
  /** The layer new keys go into now, after listing one when it is full. */
  writable(): Promise<StoredLayer<false>>
}

/** One pass over the keys still to judge: where each written key went, and the keys not written yet. */
interface Pass {
  unwritten: number[]
  readonly written: Array<{ readonly layer: StoredLayer<false>; readonly slots: readonly number[] }>
}

/**
 * Adds the `size` keys whose hash pairs are in `pairs` (key i's a at [2i], b at [2i + 1]):
 * answers[i] = 1 where key i was new. When the list moved under a pass (another process listed a
 * rebuilt layer, or dropped layers), the keys whose answer rested on a layer that is no longer
 * judged are judged and written again over the list as it is now: a key held only by layers about
 * to be dropped is new, and one written into such a layer would be lost with it.
 */
export async function addBatch(context: AddContext, pairs: Uint32Array, size: number): Promise<Uint8Array> {
  const answers = new Uint8Array(size)
  let todo = Array.from({ length: size }, (_, i) => i)
  while (todo.length > 0) {
    const judged = context.judged()
    const found = await foundAmong(context.storage, judged, pairs, todo)
    const held = todo.filter((_, slot) => found[slot] === 1)
    for (const i of todo) answers[i] = 0
    const pass: Pass = { unwritten: todo.filter((_, slot) => found[slot] === 0), written: [] }
    if (!leftJudged(judged, context.judged())) await writeNew(context, pairs, pass, answers)
    // The port reads the list's version again with each settle: what it now judges decides what stands.
    const now = context.judged()
    const ids = new Set(now.map((layer) => layer.entry.id))
    const moved = pass.written.filter(({ layer }) => !ids.has(layer.entry.id)).flatMap(({ slots }) => slots)
    todo = [...(leftJudged(judged, now) ? held : []), ...moved, ...pass.unwritten].sort((x, y) => x - y)
  }
  return answers
}

/** Whether a layer of `before` is not in `now`: a rebuild listed its layer after it, or the list dropped it. */
function leftJudged(before: readonly StoredLayer<false>[], now: readonly StoredLayer<false>[]): boolean {
  if (before.length === 0) return false
  const ids = new Set(now.map((layer) => layer.entry.id))
  return before.some((layer) => !ids.has(layer.entry.id))
}

/** found[slot] = 1 where `layers` hold key `todo[slot]`; the whole batch's pairs as they are, a subset copied. */
async function foundAmong(storage: LayerStorage<false>, layers: readonly StoredLayer<false>[], pairs: Uint32Array, todo: readonly number[]): Promise<Uint8Array> {
  if (todo.length === pairs.length / 2) return foundForPairs(storage, layers, pairs, todo.length)
  const subset = new Uint32Array(todo.length * 2)
  todo.forEach((i, slot) => subset.set(pairs.subarray(2 * i, 2 * i + 2), 2 * slot))
  return foundForPairs(storage, layers, subset, todo.length)
}

/**
 * Writes `pass.unwritten` into the writable layer(s), judging keys one at a time (section 8: keys
 * left over when a layer fills are checked again against it). Stops early, leaving the rest in
 * `pass.unwritten`, when a layer it uses turns out to have left the list.
 */
async function writeNew(context: AddContext, pairs: Uint32Array, pass: Pass, answers: Uint8Array): Promise<void> {
  const { storage } = context
  let previous: StoredLayer<false> | undefined
  while (pass.unwritten.length > 0) {
    const layer = await context.writable()
    if (previous !== undefined && previous.entry.id !== layer.entry.id) {
      // Keys are judged one at a time (docs/SPEC.md section 8): those left over when a layer
      // filled are checked again against it, since keys before them in the batch went into it.
      const left = await unlessDropped(context, previous, stillNew(previous, pairs, pass.unwritten))
      if (left === DROPPED) return
      // Keys that earlier keys of the batch made `previous` hold rest on it, as written keys do.
      const kept = new Set(left)
      pass.written.push({ layer: previous, slots: pass.unwritten.filter((i) => !kept.has(i)) })
      pass.unwritten = left
      if (left.length === 0) return
    }
    previous = layer
    let wanted = 0
    let taking = pass.unwritten
    if (context.growth !== 0) {
      // Room is reserved before writing, so that racing writers never put more than a layer's capacity into it.
      wanted = Math.min(taking.length, Math.max(1, layer.entry.capacity - layer.count))
      const granted = await storage.reserve(layer, wanted)
      if (granted === 0) continue
      taking = taking.slice(0, granted)
    }
    const out = new Uint8Array(taking.length)
    if ((await unlessDropped(context, layer, layer.store.setBits(layerBatch(layer.store.parameters, pairs, taking), out))) === DROPPED) return
    pass.unwritten = pass.unwritten.slice(taking.length)
    pass.written.push({ layer, slots: taking })
    let added = 0
    for (let slot = 0; slot < taking.length; slot++) {
      answers[taking[slot]] = out[slot]
      added += out[slot]
    }
    await storage.settle(layer, wanted, added)
  }
}

/**
 * `call` on `layer`, settled; {@link DROPPED} when it failed because another process unlisted the layer
 * (its data destroyed, or released by this process when it read the list without it): the keys
 * then go to the list as it is now. A layer still listed keeps its error (its data is lost).
 */
async function unlessDropped<T>(context: AddContext, layer: StoredLayer<false>, call: Promise<T>): Promise<T | typeof DROPPED> {
  try {
    return await call
  } catch (error) {
    const unlisted = context.storage.unlisted
    if (!mayBeDropped(error, { filterClosed: context.isClosed() }) || unlisted === undefined || !(await unlisted.call(context.storage, [layer]))) throw error
    return DROPPED
  }
}
