import { test } from 'vitest'
import { layeredFilterSuite } from '@bloomkit/core/testing'
import { LayeredRedisFilter } from '@bloomkit/redis-backend'
import { bothDeployments, uniqueName } from './support/clients.js'

const { redis: standalone, cluster } = bothDeployments()

// Core's layered suite over Redis's storage port, on a standalone server (checks in one script)
// and on a Cluster (every layer asked at once).
for (const [topology, client] of [['standalone', standalone], ['Cluster', cluster]] as const) {
  layeredFilterSuite({
    test,
    name: `LayeredRedisFilter (${topology})`,
    timeout: 30_000,
    factory: (options) => LayeredRedisFilter.create(client, uniqueName('layered-suite'), options),
    importer: (snapshot, options) => LayeredRedisFilter.import(client, uniqueName('layered-suite-import'), snapshot, options),
    sharer: (filter, options) => LayeredRedisFilter.open(client, (filter as LayeredRedisFilter).name, options),
  })
}
