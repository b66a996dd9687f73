import type { BitStore } from '@bloomkit/core/store'
import type { FilterParameters } from '@bloomkit/core'
import { RedisBloomFilter, type RedisClient, type RedisStoreOptions } from '@bloomkit/redis-backend'
import { storeOf } from '../../src/redis-bloom-filter.js'
import { uniqueName } from './clients.js'

/** The Redis name each store of the suite lives under, for `openRedisBitStore`. */
const names = new WeakMap<BitStore, string>()

/** A fresh store under a unique name: what the conformance suite's factory needs. */
export async function createRedisBitStore(redis: RedisClient, parameters: FilterParameters, options: RedisStoreOptions = {}): Promise<BitStore> {
  const name = uniqueName('suite')
  const store = storeOf(await RedisBloomFilter.fromParameters(redis, name, parameters, options))
  names.set(store, name)
  return store
}

/** Another handle on the bits of a store made by {@link createRedisBitStore}: the suite's `reopen` and `share`. */
export async function openRedisBitStore(redis: RedisClient, store: BitStore, options: RedisStoreOptions = {}): Promise<BitStore> {
  const name = names.get(store)!
  const opened = storeOf(await RedisBloomFilter.open(redis, name, { ...options, kind: 'fixed' }))
  names.set(opened, name)
  return opened
}
