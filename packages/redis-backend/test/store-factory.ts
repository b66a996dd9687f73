import type { BitStore, FilterParameters } from '@bloomkit/core'
import { RedisBloomFilter, type RedisClient } from '@bloomkit/redis-backend'
import { uniqueName } from './clients.js'

/** A fresh store under a unique name: what the conformance suite's factory needs. */
export async function createRedisBitStore(redis: RedisClient, parameters: FilterParameters): Promise<BitStore> {
  const filter = await RedisBloomFilter.fromParameters(redis, uniqueName('suite'), parameters)
  return filter.bitStore
}
