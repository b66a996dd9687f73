// A layered filter through replicas (docs/SPEC.md 9.13): every layer (the shards of a fixed filter
// with a feed, layered/redis-layer.ts) gets a replica of its own, with the layered filter's
// `replica` option, so each holds its bits in this process and answers
// by its own rules. A sealed layer is loaded once (its feed never moves again; the follower's
// catch-ups find nothing); the active one is fed. The list is the layered meta's: a key that no
// layer held shows present is "absent" only once each layer's barrier and a read of the list's
// version that began after the call agree that no layer was listed meanwhile (redis-layers.ts).
import { refuseWithoutFeed, type Replica } from './replica.js'
import type { ReplicaSettings } from './replica-options.js'

/** A layer as the probe needs it (layered/redis-layer.ts): its replica, or `BLOOM_CLOSED` once released, `BLOOM_INCOMPATIBLE` without one. */
interface ReplicatedLayer {
  replica(): Replica
}

/** What {@link probeReplicas} found beside the keys: layers found gone, and whether every key was found (no version read needed). */
export interface ReplicaProbe<Layer> {
  readonly lost: Array<{ readonly layer: Layer; readonly error: unknown }>
  readonly allFound: boolean
}

/**
 * Asks every layer's replica for the keys hashed to `pairs`, ORing answers into `found`: first
 * every layer's bits (a key one layer shows present is answered, with no I/O), then, for the keys
 * none shows, every layer by its rules (a barrier each). A layer found gone (`isGone`:
 * `BLOOM_DATA_LOST`, `BLOOM_CLOSED`) is returned in `lost`; any other error rejects.
 */
export async function probeReplicas<Layer extends ReplicatedLayer>(layers: readonly Layer[], pairs: Uint32Array, size: number, found: Uint8Array, isGone: (error: unknown) => boolean): Promise<ReplicaProbe<Layer>> {
  const lost: Array<{ layer: Layer; error: unknown }> = []
  const replicas: Array<Replica | undefined> = layers.map((layer) => {
    try {
      return layer.replica()
    } catch (error) {
      if (!isGone(error)) throw error
      lost.push({ layer, error })
      return undefined
    }
  })
  let missing = 0
  for (let i = 0; i < size; i++) {
    const a = pairs[2 * i] | 0
    const b = pairs[2 * i + 1] | 0
    for (const replica of replicas) if (replica?.showsPresent(a, b)) found[i] = 1
    missing += 1 - found[i]
  }
  if (missing > 0) {
    const skip = found.slice()
    await Promise.all(
      layers.map(async (layer, j) => {
        if (replicas[j] === undefined) return
        try {
          const out = await replicas[j].testPairs(pairs, size, skip)
          for (let i = 0; i < size; i++) found[i] |= out[i]
        } catch (error) {
          if (!isGone(error)) throw error
          lost.push({ layer, error })
        }
      }),
    )
  }
  return { lost, allFound: missing === 0 }
}

/**
 * Whether a layered filter is opened with `replica` (its settings), after checking its layers
 * have feeds (`feedLength`, the layered meta's).
 * @throws BloomError `BLOOM_INCOMPATIBLE` for a replica of a layered filter without feeds (format 1).
 */
export function replicatedLayers(name: string, replica: ReplicaSettings | undefined, feedLength: number): boolean {
  if (replica === undefined) return false
  refuseWithoutFeed(name, feedLength)
  return true
}
