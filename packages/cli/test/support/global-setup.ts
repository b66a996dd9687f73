import type { TestProject } from 'vitest/node'
import { startRedisCluster, startRedisServer, type RedisAddress } from '../../../../test-support/redis-servers.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A throwaway standalone server for the CLI tests (each test uses its own filter names). */
    cliRedis: RedisAddress
    /** The masters of a throwaway 3-master Cluster. */
    cliCluster: RedisAddress[]
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [standalone, cluster] = await Promise.all([startRedisServer(), startRedisCluster(3)])
  project.provide('cliRedis', { host: standalone.host, port: standalone.port })
  project.provide('cliCluster', [...cluster.nodes])
  return async () => {
    await Promise.all([standalone.stop(), cluster.stop()])
  }
}
