import type { TestProject } from 'vitest/node'
import { startRedisCluster, startRedisServer, type RedisAddress } from '../../../../test-support/redis-servers.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The throwaway standalone server shared by the tests (each uses its own key names). */
    redisStandalone: RedisAddress
    /** The masters of the throwaway 3-master Cluster. */
    redisCluster: RedisAddress[]
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [standalone, cluster] = await Promise.all([startRedisServer(), startRedisCluster(3)])
  project.provide('redisStandalone', { host: standalone.host, port: standalone.port })
  project.provide('redisCluster', [...cluster.nodes])
  return async () => {
    await Promise.all([standalone.stop(), cluster.stop()])
  }
}
