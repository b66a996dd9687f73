import { test } from 'vitest'
import type { BloomFilter } from '@bloomkit/core'
import { bloomFilterSuite } from '@bloomkit/core/testing'
import { RedisBloomFilter, type RedisClient } from '@bloomkit/redis-backend'
import { bothDeployments, PATHS, uniqueName } from './support/clients.js'

const { redis: standalone, cluster } = bothDeployments()

/** Deletes the Redis keys of the (closed) filters a suite test made. */
const destroyed = (client: RedisClient) => async (filters: BloomFilter[]) => {
  for (const filter of filters) await RedisBloomFilter.destroy(client, (filter as RedisBloomFilter).name)
}

// Core's filter-level suite (the whole BloomFilter API, hooks included) over Redis, standalone and
// Cluster, on each path a batch can take.
for (const [topology, client] of [['standalone', standalone], ['Cluster', cluster]] as const) {
  for (const [path, options] of PATHS) {
    bloomFilterSuite({
      test,
      factory: (parameters) => RedisBloomFilter.fromParameters(client, uniqueName('filter-suite'), parameters, options),
      cleanup: destroyed(client),
      timeout: 20_000,
      name: `RedisBloomFilter (${topology}, ${path})`,
    })
  }
}
