// Issue 35 item 8, failover: a Cluster whose master of the filter's shard is SIGKILLed after writes
// its replica (SIGSTOPped meanwhile) never got, and that replica taken over as master. A replica
// of the filter that added keys in that gap, and stands on an entry the promoted node still has,
// must write those keys again when they are added again: nothing acknowledged after the failover
// reads absent, through it or through a fresh instance.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Cluster, Redis } from 'ioredis'
import { afterAll, expect, test } from 'vitest'
import type { FilterParameters } from '@bloomkit/core'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { freePort, startRedisServer, type RedisServerHandle } from '../../../test-support/redis-servers.js'
import { fastFail, uniqueName } from './support/clients.js'
import { KeyNames } from '../src/layout/key-names.js'

const run = promisify(execFile)
const SMALL: FilterParameters = { bits: 64 * 512, hashes: 7, shards: 1, seed: 13, scheme: 2, layout: 'blocked' }
const range = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}:${from + i}`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const servers: RedisServerHandle[] = []
afterAll(async () => {
  for (const server of servers) {
    try {
      process.kill(server.pid, 'SIGCONT')
    } catch {
      // Gone.
    }
  }
  await Promise.all(servers.map((server) => server.stop()))
})

/** Three masters with a replica each. */
async function startClusterWithReplicas(): Promise<void> {
  for (let i = 0; i < 6; i++) {
    const port = await freePort()
    const bus = await freePort()
    servers.push(await startRedisServer({ port, args: ['--cluster-enabled', 'yes', '--cluster-port', String(bus), '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '1000'] }))
  }
  await run('redis-cli', ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', '1', '--cluster-yes'])
  await until(async () => (await Promise.all(servers.map((s) => info(s.port, 'cluster', 'info')))).every((text) => text.includes('cluster_state:ok')))
}

async function info(port: number, ...command: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...command])
  return stdout
}

async function until(condition: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await sleep(100)
  }
}

/** Retries a call through the failover's errors (errors are allowed; a wrong answer is not). */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call()
    } catch (error) {
      if (attempt > 100) throw error
      await sleep(100)
    }
  }
}

test('keys a replica added that a failover lost are written again when added again (Cluster with replicas)', async () => {
  await startClusterWithReplicas()
  const nodes = servers.map((s) => ({ host: '127.0.0.1', port: s.port }))
  const options = { redisOptions: fastFail, clusterRetryStrategy: () => 100 }
  const client = new Cluster(nodes, options).on('error', () => {})
  const name = uniqueName('replica-failover')
  const direct = await RedisBloomFilter.fromParameters(client, name, SMALL, { feed: true })
  const replica = await RedisBloomFilter.open(client, name, { kind: 'fixed', replica: true })
  ;(replica as unknown as { replicaOf: { follower: { stop(): void } } }).replicaOf.follower.stop()
  await direct.addMany(range('kept', 0, 300))
  expect((await replica.hasMany(range('kept', 0, 300))).every(Boolean)).toBe(true)
  // The master of the shard's slot, and its replica once it has every write so far.
  const slot = Number(await info(servers[0].port, 'cluster', 'keyslot', new KeyNames(name, 1).shard(0)))
  const holds = (range: string) => {
    const [from, to = from] = range.split('-').map(Number)
    return slot >= from && slot <= to
  }
  // cluster_state:ok can come before gossip has told servers[0] which node replicates which (and
  // at what address): read CLUSTER NODES until the slot's master and its replica both show.
  let masterLine: string[] | undefined
  let replicaLine: string[] | undefined
  await until(async () => {
    const lines = (await info(servers[0].port, 'cluster', 'nodes')).trim().split('\n').map((line) => line.split(' '))
    const known = (f: string[]) => f[1].startsWith('127.0.0.1:') && !f[2].includes('noaddr')
    masterLine = lines.find((f) => f[2].includes('master') && known(f) && f.slice(8).some(holds))
    replicaLine = masterLine === undefined ? undefined : lines.find((f) => f[3] === masterLine![0] && known(f))
    return replicaLine !== undefined
  })
  const portOf = (f: string[]) => Number(f[1].split(':')[1].split('@')[0])
  const master = servers.find((s) => s.port === portOf(masterLine!))!
  const standby = servers.find((s) => s.port === portOf(replicaLine!))!
  const masterClient = new Redis({ port: master.port, ...fastFail })
  expect(await masterClient.call('WAIT', 1, 5000)).toBe(1)
  // The standby stops (so it cannot reconnect), and the master drops its link: writes from now on
  // never reach it. The replica then adds keys the standby will never get.
  process.kill(standby.pid, 'SIGSTOP')
  await masterClient.call('CLIENT', 'KILL', 'TYPE', 'replica')
  masterClient.disconnect()
  const lost = range('lost', 0, 200)
  expect((await replica.addMany(lost)).every(Boolean)).toBe(true)
  await master.kill()
  process.kill(standby.pid, 'SIGCONT')
  await info(standby.port, 'cluster', 'failover', 'takeover')
  await until(async () => (await info(standby.port, 'role')).startsWith('master'))
  const fresh = new Cluster(nodes.filter((n) => n.port !== master.port), options).on('error', () => {})
  const after = await retried(() => RedisBloomFilter.open(fresh, name, { kind: 'fixed' }))
  expect((await retried(() => after.hasMany(lost))).some(Boolean), 'the failover lost those writes').toBe(false)
  // Added again after the failover (acknowledged now): each key reaches the new master and says new.
  const answers = await retried(() => replica.addMany(lost))
  expect(answers.every(Boolean), 'each key is new to the promoted node').toBe(true)
  expect((await retried(() => after.hasMany(lost))).every(Boolean), 'every key acknowledged after the failover reads present').toBe(true)
  expect((await retried(() => replica.hasMany(lost))).every(Boolean)).toBe(true)
  await replica.close()
  await after.close()
  fresh.disconnect()
  client.disconnect()
}, 60_000)
