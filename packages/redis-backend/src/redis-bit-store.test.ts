import { afterAll, test } from 'vitest'
import { bitStoreSuite } from '@bloomkit/core/testing'
import { createRedisBitStore } from '../test/store-factory.js'
import { clusterClient, standaloneClient } from '../test/clients.js'

const standalone = standaloneClient()
const cluster = clusterClient()
afterAll(async () => {
  await Promise.all([standalone.quit(), cluster.quit()])
})

bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(standalone, parameters), name: 'RedisBitStore (standalone)', timeout: 20_000 })
bitStoreSuite({ test, factory: (parameters) => createRedisBitStore(cluster, parameters), name: 'RedisBitStore (Cluster)', timeout: 20_000 })
