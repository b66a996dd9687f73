import type { TestProject } from 'vitest/node'
import { startRedisCluster, startRedisServer, type RedisClusterHandle, type RedisServerHandle } from '../../test-support/redis-servers.js'

/**
 * The servers the runtimes projects' test files inject, under the names their own packages' global
 * setups provide (redis-backend's `redisStandalone` and `redisCluster`, the guard's `redisAddress`):
 * one standalone redis-server and one 3-master Cluster, started once for every runtimes project of
 * the run (each project runs this file, in the one vitest process) and stopped after the last. The
 * tests use names of their own, so sharing the servers between runtimes is what their own projects
 * already do between files.
 */
interface Servers {
  readonly standalone: RedisServerHandle
  readonly cluster: RedisClusterHandle
}

interface Shared {
  readonly servers: Promise<Servers>
  users: number
}

const KEY = Symbol.for('bloomkit.runtimes.servers')
const registry = globalThis as typeof globalThis & { [KEY]?: Shared }

async function startServers(): Promise<Servers> {
  const [standalone, cluster] = await Promise.all([startRedisServer(), startRedisCluster(3)])
  return { standalone, cluster }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (registry[KEY] ??= { servers: startServers(), users: 0 })
  shared.users++
  const { standalone, cluster } = await shared.servers
  const address = { host: standalone.host, port: standalone.port }
  project.provide('redisStandalone', address)
  project.provide('redisCluster', [...cluster.nodes])
  project.provide('redisAddress', address)
  return async () => {
    if (--shared.users > 0) return
    delete registry[KEY]
    await Promise.all([standalone.stop(), cluster.stop()])
  }
}
