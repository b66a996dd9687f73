import type { BitStore } from '@bloomkit/core/store'
import type { FilterParameters } from '@bloomkit/core'
import { RedisBloomFilter, type RedisClient, type RedisStoreOptions } from '@bloomkit/redis-backend'
import { uniqueName } from './clients.js'

/** A fresh store under a unique name: what the conformance suite's factory needs. */
export async function createRedisBitStore(redis: RedisClient, parameters: FilterParameters, options: RedisStoreOptions = {}): Promise<BitStore> {
  const filter = await RedisBloomFilter.fromParameters(redis, uniqueName('suite'), parameters, options)
  return filter.bitStore
}
