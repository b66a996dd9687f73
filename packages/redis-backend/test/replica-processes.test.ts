// Issue 35 item 8: several processes add and check one filter, some through replicas (strict and
// bounded), some directly, while writers are SIGKILLed mid-batch, the feeds are trimmed all the time
// (a short feedLength on servers whose stream nodes hold 4 entries), and the filter is cleared,
// rebuilt, imported over, destroyed and created again, and (standalone) Redis is killed and
// restarted from its append-only file. Whatever happens, no key whose add was acknowledged before
// a strict check began reads absent (unless a clear, destroy, import or rebuild that may undo it,
// as their docs say, began before the answer), and a bounded replica never answers "absent" for a
// key acknowledged more than maxStaleness before its check. Errors are allowed (and counted): only
// a wrong "absent" is a failure. One fixed schedule per deployment (the suite's fixed seed).
import { execFile } from 'node:child_process'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import fc from 'fast-check'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, expect } from 'vitest'
import type { FilterParameters } from '@bloomkit/core'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { prop } from '../../../test-support/property-test.js'
import { startRedisCluster, startRedisServer, type RedisAddress, type RedisClusterHandle, type RedisServerHandle } from '../../../test-support/redis-servers.js'
import { AcknowledgedAdds, type Violation } from './support/acknowledged.js'
import { fastFail, uniqueName } from './support/clients.js'
import { WorkerProcess, type WorkerSpec } from './support/worker-process.js'

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL('..', import.meta.url))

const PARAMETERS: FilterParameters = { bits: 8 * 64 * 512, hashes: 7, shards: 4, seed: 11, scheme: 2, layout: 'blocked' }
/** Entries a feed keeps: with 4-entry stream nodes, trimming takes positions away often. */
const FEED_LENGTH = 8
const STREAM_NODE_ENTRIES = ['--stream-node-max-entries', '4']
const MAX_STALENESS = 40
/** Calls at the end of a schedule, after the last administrative step. */
const CALLS_LAST = 30
/** Worker kinds, by replica option. */
const KINDS: ReadonlyArray<WorkerSpec['replica']> = [true, true, { maxStaleness: MAX_STALENESS }, false, false]

let server: RedisServerHandle
let cluster: RedisClusterHandle
let standaloneDir: string

beforeAll(async () => {
  standaloneDir = await mkdtemp(join(tmpdir(), 'bloomkit-replica-processes-'))
  // The worker processes run the built package; build it (a no-op when dist is current).
  const built = run('npx', ['tsc', '-b', '.'], { cwd: packageDir })
  ;[server, cluster] = await Promise.all([startRedisServer({ dir: standaloneDir, args: [...STREAM_NODE_ENTRIES, '--appendonly', 'yes', '--appendfsync', 'always'] }), startRedisCluster(3)])
  await Promise.all(
    cluster.nodes.map(async (node) => {
      const client = new Redis({ ...node, ...fastFail })
      await client.config('SET', 'stream-node-max-entries', '4')
      await client.quit()
    }),
  )
  await built
}, 120_000)
afterAll(async () => {
  await Promise.all([server?.stop(), cluster?.stop()])
})

/** A call: `worker` adds or checks keys (add-then-has: `other` checks them once the add is acknowledged). */
interface CallStep {
  readonly kind: 'add' | 'has' | 'add-then-has'
  readonly worker: number
  readonly other: number
  readonly size: number
  readonly singles: boolean
  readonly pause: number
}
/** Something done to the filter, its processes or Redis while calls go on. */
interface AdminStep {
  readonly kind: 'clear' | 'rebuild' | 'import' | 'recreate' | 'kill' | 'restart'
  readonly worker: number
  readonly pause: number
}
type Step = CallStep | AdminStep

/** Every administrative step, each in every schedule (in a drawn order): kills twice. */
const ADMIN_KINDS: ReadonlyArray<AdminStep['kind']> = ['clear', 'rebuild', 'import', 'recreate', 'kill', 'kill', 'restart']
/** Calls between two administrative steps. */
const CALLS_BETWEEN = 14

const worker = fc.nat({ max: KINDS.length - 1 })
const pause = fc.nat({ max: 12 })
const callStep = fc.record({ kind: fc.constantFrom('add' as const, 'has' as const, 'add-then-has' as const), worker, other: worker, size: fc.integer({ min: 1, max: 150 }), singles: fc.boolean(), pause })
const adminOrder = fc.shuffledSubarray([...ADMIN_KINDS], { minLength: ADMIN_KINDS.length, maxLength: ADMIN_KINDS.length })
const callCount = CALLS_BETWEEN * ADMIN_KINDS.length + CALLS_LAST
/** Calls, with an administrative step after every CALLS_BETWEEN of them until the last CALLS_LAST. */
const schedule = fc
  .tuple(fc.array(callStep, { minLength: callCount, maxLength: callCount }), adminOrder, fc.array(fc.tuple(worker, pause), { minLength: ADMIN_KINDS.length, maxLength: ADMIN_KINDS.length }))
  .map(([calls, order, admins]) => {
    const steps: Step[] = []
    calls.forEach((call, i) => {
      steps.push(call)
      const k = (i + 1) / CALLS_BETWEEN - 1
      if (Number.isInteger(k) && k < order.length) steps.push({ kind: order[k], worker: admins[k][0], pause: admins[k][1] })
    })
    return steps
  })

interface Deployment {
  readonly cluster: boolean
  nodes(): readonly RedisAddress[]
  client(): Redis | Cluster
  /** Kills Redis and starts it again from its files (standalone only). */
  restart?(): Promise<void>
}

const standalone: Deployment = {
  cluster: false,
  nodes: () => [{ host: server.host, port: server.port }],
  client: () => new Redis({ host: server.host, port: server.port, ...fastFail }).on('error', () => {}),
  async restart() {
    await server.kill()
    server = await startRedisServer({ port: server.port, dir: standaloneDir, args: [...STREAM_NODE_ENTRIES, '--appendonly', 'yes', '--appendfsync', 'always'] })
  },
}
const clustered: Deployment = {
  cluster: true,
  nodes: () => cluster.nodes,
  client: () => new Cluster([...cluster.nodes], { redisOptions: fastFail, clusterRetryStrategy: () => 100 }).on('error', () => {}),
}

for (const deployment of [standalone, clustered]) {
  prop([schedule], { numRuns: 1, endOnFailure: true })(
    `no acknowledged key reads absent to a strict check, nor to a bounded one past its bound (${deployment.cluster ? 'Cluster' : 'standalone'})`,
    async (steps) => {
      const outcome = await runSchedule(deployment, steps as Step[])
      console.log(JSON.stringify(outcome.counts))
      expect(outcome.violations).toEqual([])
      // The schedule did what it says (counts vary with timing; seen 270 to 6 000 verified per kind): keys verified through
      // replicas, positions lost and reloaded, every administrative step done.
      expect(outcome.counts.verifiedStrictReplica).toBeGreaterThan(200)
      expect(outcome.counts.verifiedBounded).toBeGreaterThan(50)
      expect(outcome.counts.verifiedDirect).toBeGreaterThan(200)
      expect(outcome.counts.kills).toBe(2)
      expect(outcome.counts.admin).toBe(ADMIN_KINDS.length)
      expect(outcome.counts.reloads).toBeGreaterThan(0)
    },
    60_000,
  )
}

interface Outcome {
  readonly violations: Violation[]
  readonly counts: Record<string, number>
}

async function runSchedule(deployment: Deployment, steps: readonly Step[]): Promise<Outcome> {
  const name = uniqueName('replica-processes')
  const model = new AcknowledgedAdds()
  const violations: Violation[] = []
  const counts: Record<string, number> = { verifiedStrictReplica: 0, verifiedBounded: 0, verifiedDirect: 0, errors: 0, kills: 0, reloads: 0, admin: 0 }
  const client = deployment.client()
  let admin = await RedisBloomFilter.fromParameters(client, name, PARAMETERS, { feed: true, feedLength: FEED_LENGTH })
  // A worker takes requests at once (they wait in its stdin until it has opened the filter).
  const spawnWorker = (kind: number) => new WorkerProcess({ cluster: deployment.cluster, nodes: deployment.nodes(), name, replica: KINDS[kind] })
  const workers = KINDS.map((_, kind) => spawnWorker(kind))
  await Promise.all(workers.map((each) => each.ready))
  const inFlight = new Set<Promise<unknown>>()
  const track = (promise: Promise<unknown>) => {
    inFlight.add(promise)
    void promise.finally(() => inFlight.delete(promise))
  }
  let nextKey = 0
  const pickKeys = (size: number, fresh: number) => {
    const known = model.allKeys()
    const keys: string[] = []
    for (let i = 0; i < size; i++) keys.push(i < fresh * size || known.length === 0 ? `k${nextKey++}` : known[(nextKey * 7919 + i * 104729) % known.length])
    return keys
  }

  const add = async (at: number, keys: string[], singles: boolean) => {
    const sent = model.tick()
    const reply = await workers[at].request('add', keys, { singles })
    if (reply.answers !== undefined) model.acknowledge(keys, sent)
    else counts.errors++
  }
  const check = async (at: number, keys: string[], singles: boolean) => {
    const sentAt = performance.now()
    const sent = model.tick()
    const { replica } = workers[at].spec
    const reply = await workers[at].request('has', keys, { singles })
    const answered = model.tick()
    if (reply.answers === undefined) return void counts.errors++
    const maxStaleness = typeof replica === 'object' ? replica.maxStaleness : 0
    const counter = replica === false ? 'verifiedDirect' : maxStaleness > 0 ? 'verifiedBounded' : 'verifiedStrictReplica'
    reply.answers.forEach((present, i) => {
      if (!model.required(keys[i], sent, sentAt, answered, maxStaleness)) return
      if (present) counts[counter]++
      else violations.push({ key: keys[i], who: JSON.stringify(replica), op: singles ? 'has' : 'hasMany' })
    })
  }
  const administer = async (step: Step) => {
    counts.admin++
    if (step.kind === 'clear') {
      const event = model.begin('wipe')
      await admin.clear()
      event.end = model.tick()
    } else if (step.kind === 'rebuild') {
      const event = model.begin('rebuild')
      async function* source() {
        event.pull = model.tick()
        yield* model.keysAcknowledgedBefore(event.pull)
      }
      await admin.rebuild(source())
      event.end = model.tick()
    } else if (step.kind === 'import') {
      const event = model.begin('import')
      const snapshot = await admin.export()
      await RedisBloomFilter.import(client, name, snapshot, { kind: 'fixed' })
      event.end = model.tick()
    } else if (step.kind === 'recreate') {
      const event = model.begin('wipe')
      await admin.destroy()
      admin = await RedisBloomFilter.fromParameters(client, name, PARAMETERS, { feed: true, feedLength: FEED_LENGTH })
      event.end = model.tick()
    } else if (step.kind === 'kill') {
      // Mid-batch: a big add in flight, then SIGKILL; its keys were never acknowledged.
      const victim = workers[step.worker]
      const pending = add(step.worker, pickKeys(2000, 1), false)
      await new Promise((resolve) => setTimeout(resolve, 1 + step.pause))
      victim.kill()
      workers[step.worker] = spawnWorker(step.worker)
      await pending
      counts.kills++
      await workers[step.worker].ready
    } else if (step.kind === 'restart' && deployment.restart !== undefined) {
      await deployment.restart()
      counts.restarts = (counts.restarts ?? 0) + 1
    }
  }

  // One administrative step at a time, while calls go on (one that comes while another runs waits
  // for it); the last steps are calls only, so that the final check has keys to verify.
  let adminDone: Promise<void> = Promise.resolve()
  for (const step of steps) {
    if (step.kind === 'add') track(add(step.worker, pickKeys(step.size, 0.7), step.singles))
    else if (step.kind === 'has') track(check(step.worker, pickKeys(step.size, 0.2), step.singles))
    else if (step.kind === 'add-then-has') {
      // The race that matters: checked through another process right after the add was acknowledged.
      const keys = pickKeys(step.size, 1)
      track(add(step.worker, keys, step.singles).then(() => check(step.other, keys, step.singles)))
    } else {
      await adminDone
      adminDone = administer(step)
      track(adminDone)
    }
    await new Promise((resolve) => setTimeout(resolve, step.pause))
  }
  while (inFlight.size > 0) await Promise.all(inFlight)
  // Last, every key through every process, after the bounded replica's window has passed.
  await new Promise((resolve) => setTimeout(resolve, 2 * MAX_STALENESS))
  const all = model.allKeys()
  await Promise.all(workers.map((_, at) => check(at, all, false)))
  for (const each of workers) {
    const { status } = await each.request('status')
    if (status) counts.reloads += status.loads - PARAMETERS.shards
  }
  await Promise.all(workers.map((each) => each.end()))
  await admin.destroy()
  client.disconnect()
  return { violations, counts }
}
