// What open and create do with the `replica` option of a fixed filter: check that a replica can
// follow the filter and fits its memory bound, then load it and start following.
import type { BitStore, KeyHasher } from '@bloomkit/core/store'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { Replica, refuseWithoutFeed } from './replica.js'
import { checkReplicaBytes, type ReplicaSettings } from './replica-options.js'

/**
 * The replica that the `replica` option asks for (its settings, checked; loaded, following), or undefined for none.
 * @throws BloomError `BLOOM_INCOMPATIBLE` (the filter has no feed), `BLOOM_INVALID_PARAMETER`
 *   (`replica.maxBytes`), and as a load does.
 */
export async function startReplica(generations: ShardGenerations, store: BitStore<false>, hasher: KeyHasher, settings: ReplicaSettings | undefined): Promise<Replica | undefined> {
  if (settings === undefined) return undefined
  const { name } = generations.names
  refuseWithoutFeed(name, generations.feedLength)
  checkReplicaBytes(name, generations.parameters.bits / 8, settings)
  const started = new Replica(generations, store, hasher, settings)
  try {
    await started.start()
  } catch (error) {
    started.close()
    throw error
  }
  return started
}
