import type { TestProject } from 'vitest/node'
import { startRedisServer, type RedisAddress } from '../../../../test-support/redis-servers.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The throwaway redis-server shared by the guard tests (each test uses its own names). */
    redisAddress: RedisAddress
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startRedisServer()
  project.provide('redisAddress', { host: server.host, port: server.port })
  return () => server.stop()
}
