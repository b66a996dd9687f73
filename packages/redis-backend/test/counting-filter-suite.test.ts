import { RedisBloomFilter, RedisCountingFilter, type RedisClient } from '@bloomkit/redis-backend'
import { countingFilterSuite } from '../../../test-support/counting-suite.js'
import { bothDeployments, uniqueName } from './support/clients.js'

const { redis: standalone, cluster } = bothDeployments()

// Batches of 10 000–20 000 keys are one script call each: on a loaded CI runner one can take longer
// than the default 5 s reply timeout, which is not what these tests test.
const slowReplies = { timeout: 30_000 }

for (const [topology, client] of [['standalone', standalone], ['Cluster', cluster]] as [string, RedisClient][]) {
  countingFilterSuite({
    name: `Redis (${topology})`,
    create: (parameters) => RedisCountingFilter.fromParameters(client, uniqueName('counting'), parameters, slowReplies),
    createPlain: (parameters) => RedisBloomFilter.fromParameters(client, uniqueName('plain'), parameters, slowReplies),
    importCounting: (snapshot) => RedisCountingFilter.import(client, uniqueName('counting-import'), snapshot, slowReplies),
    runs: 25,
    fpr: topology === 'standalone' ? { capacity: 20_000, probes: 200_000 } : undefined,
  })
}
