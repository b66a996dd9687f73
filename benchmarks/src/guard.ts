// The case for @bloomkit/guard: a users table of 1M rows in PGlite (PostgreSQL in-process) behind
// three read paths, under traffic that mixes real users (Zipf) with an attack of fresh absent IDs:
// the database alone; a go-zero style cache (Redis, a "*" placeholder for absent rows, in-process
// single flight); and the guard (a RedisBloomFilter in front of the same kind of cache). Then the
// stampede case: 1,000 concurrent requests for one uncached key from 4 processes.
import { PGlite } from '@electric-sql/pglite'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { CacheGuard } from '@bloomkit/guard'
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { startRedisServer } from '../../test-support/dist/redis-servers.js'
import type { SuiteOptions } from './measure.js'
import type { Report } from './report.js'

/** Users in the table, requests per mix and stampede rounds; a quick run (`--quick`) takes fewer. */
let USERS = 1_000_000
const ERROR_RATE = 0.01
let REQUESTS = Number(process.env.GUARD_REQUESTS ?? 10_000)
const IN_FLIGHT = 16
const ATTACK_SHARES = [0, 0.5, 0.9]
/** Zipf exponent of real users' popularity. */
const ZIPF_S = 1
const STAMPEDE_PROCESSES = 4
const STAMPEDE_REQUESTS = 1000
let STAMPEDE_ROUNDS = 5

type User = { id: string; name: string }
type Setup = { name: string; get: (id: string) => Promise<User | null> }

/** The database and a counter of its point queries, split by whether the id exists. */
class UsersTable {
  queries = 0
  attackQueries = 0
  private constructor(readonly db: PGlite) {}

  static async create(): Promise<UsersTable> {
    const db = new PGlite()
    await db.exec(`CREATE TABLE users AS SELECT g::text AS id, 'user ' || g AS name FROM generate_series(1, ${USERS}) g;
      ALTER TABLE users ADD PRIMARY KEY (id);`)
    return new UsersTable(db)
  }

  user = async (id: string): Promise<User | null> => {
    this.queries++
    if (!isUserId(id)) this.attackQueries++
    const { rows } = await this.db.query<User>('SELECT id, name FROM users WHERE id = $1', [id])
    return rows[0] ?? null
  }

  async *ids(): AsyncGenerator<string[]> {
    let after = ''
    for (;;) {
      const { rows } = await this.db.query<{ id: string }>('SELECT id FROM users WHERE id > $1 ORDER BY id LIMIT 100000', [after])
      if (rows.length > 0) yield rows.map((row) => row.id)
      if (rows.length < 100_000) return
      after = rows[rows.length - 1].id
    }
  }
}

const isUserId = (id: string) => !id.startsWith('x')

/**
 * go-zero's cache layer as a user would port it (core/stores/cache/cachenode.go): GET; "*" means
 * absent; else one load per key in this process (singleflight), cached with the TTL ± 5 % or the
 * placeholder with its own expiry.
 */
function cacheOnly(redis: Redis, prefix: string, load: (id: string) => Promise<User | null>): Setup {
  const flights = new Map<string, Promise<User | null>>()
  return {
    name: 'cache only (go-zero style)',
    async get(id) {
      const key = `${prefix}${id}`
      const raw = await redis.get(key)
      if (raw === '*') return null
      if (raw !== null) return JSON.parse(raw) as User
      let flight = flights.get(key)
      if (flight === undefined) {
        flight = (async () => {
          const user = await load(id)
          if (user === null) await redis.set(key, '*', 'EX', 60)
          else await redis.set(key, JSON.stringify(user), 'EX', Math.round(300 * (0.95 + 0.1 * Math.random())))
          return user
        })().finally(() => flights.delete(key))
        flights.set(key, flight)
      }
      return flight
    },
  }
}

/** xorshift32: the same request sequence for every set-up. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 4294967296
  }
}

/** Ranks 1..n drawn with P(r) ∝ 1/r^s, by binary search in the cumulative weights. */
function zipfSampler(n: number, s: number, next: () => number): () => number {
  const cumulative = new Float64Array(n)
  let total = 0
  for (let r = 1; r <= n; r++) cumulative[r - 1] = total += 1 / Math.pow(r, s)
  return () => {
    const target = next() * total
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cumulative[mid] < target) lo = mid + 1
      else hi = mid
    }
    return lo + 1
  }
}

/**
 * `count` requests: an `attackShare` of fresh IDs that exist nowhere (never repeated), the rest
 * real users by Zipf popularity, the ranks scattered over the ID space.
 */
function traffic(count: number, attackShare: number, seed: number, zipf: () => number, next: () => number): string[] {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    if (next() < attackShare) ids.push(`x${seed}-${i}-${Math.floor(next() * 1e9)}`)
    else ids.push(String(1 + ((zipf() * 7919) % USERS)))
  }
  return ids
}

interface RunResult {
  seconds: number
  queries: number
  attackQueries: number
  attackRequests: number
  p50: number
  p99: number
  wrong: number
}

/** Sends `ids` through `setup` with IN_FLIGHT requests in flight; latency per request. */
async function run(setup: Setup, ids: string[], table: UsersTable): Promise<RunResult> {
  const latencies = new Float64Array(ids.length)
  const queriesBefore = table.queries
  const attackBefore = table.attackQueries
  let next = 0
  let wrong = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < ids.length) {
        const i = next++
        const t = performance.now()
        const user = await setup.get(ids[i])
        latencies[i] = performance.now() - t
        if ((user !== null) !== isUserId(ids[i])) wrong++
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort()
  return {
    seconds,
    queries: table.queries - queriesBefore,
    attackQueries: table.attackQueries - attackBefore,
    attackRequests: ids.filter((id) => !isUserId(id)).length,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    wrong,
  }
}

export async function runGuardBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  if (quick) [USERS, REQUESTS, STAMPEDE_ROUNDS] = [100_000, 2_000, 2]
  console.log(`\nguard: ${USERS.toLocaleString('en')} users in PGlite, ${REQUESTS.toLocaleString('en')} requests per run, ${IN_FLIGHT} in flight`)
  const server = await startRedisServer()
  const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
  const children: ChildProcess[] = []
  try {
    let t = performance.now()
    const table = await UsersTable.create()
    const tableSeconds = (performance.now() - t) / 1000
    t = performance.now()
    const filter = await RedisBloomFilter.create(redis, 'bench:guard:ids', { capacity: USERS, errorRate: ERROR_RATE })
    const guard = new CacheGuard<User>({ filter, cache: redis, name: 'bench:guard', load: table.user })
    for await (const page of table.ids()) await guard.warm(page)
    const warmSeconds = (performance.now() - t) / 1000
    console.log(`  table ${tableSeconds.toFixed(1)} s, filter warmed from the table in ${warmSeconds.toFixed(1)} s`)

    const setups: Setup[] = [
      { name: 'database only', get: table.user },
      cacheOnly(redis, 'bench:cacheonly:', table.user),
      { name: 'guard', get: (id) => guard.get(id) },
    ]
    const next = random(20261123)
    const zipf = zipfSampler(USERS, ZIPF_S, next)
    const attackQueries = new Map<string, number>()
    let attackSeconds = 0
    for (const [index, share] of ATTACK_SHARES.entries()) {
      const ids = traffic(REQUESTS, share, index, zipf, next)
      for (const setup of setups) {
        const r = await run(setup, ids, table)
        if (r.wrong > 0) throw new Error(`${setup.name} answered ${r.wrong} requests wrongly`)
        if (share === 0.9) attackQueries.set(setup.name, r.queries)
        if (share === 0.9 && setup.name.startsWith('cache only')) attackSeconds = r.seconds
        const attackPart = r.attackRequests > 0 ? `; attack requests reaching the database ${((100 * r.attackQueries) / r.attackRequests).toFixed(2)} %` : ''
        report.add({
          suite: 'guard',
          task: `${Math.round(share * 100)} % attack, ${REQUESTS.toLocaleString('en')} requests, ${IN_FLIGHT} in flight`,
          subject: setup.name,
          batch: 1,
          opsPerSecond: REQUESTS / r.seconds,
          notes: `DB queries per 1,000 requests ${((1000 * r.queries) / REQUESTS).toFixed(1)}; p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms${attackPart}`,
        })
      }
    }
    const cacheOnlyQueries = attackQueries.get('cache only (go-zero style)')!
    const guardQueries = attackQueries.get('guard')!
    report.add({
      suite: 'guard',
      task: `90 % attack of fresh IDs, first ${REQUESTS.toLocaleString('en')} requests`,
      subject: 'cache only / guard',
      batch: 1,
      opsPerSecond: 0,
      notes: `DB queries ${cacheOnlyQueries} vs ${guardQueries}: ${(cacheOnlyQueries / Math.max(1, guardQueries)).toFixed(1)}× fewer with the guard, over the attack's first ${attackSeconds.toFixed(1)} s for the cache-only set-up (within its first minute); filter ${USERS.toLocaleString('en')} keys at p = ${ERROR_RATE}`,
    })
    const stats = guard.stats()
    console.log(`  guard stats: ${JSON.stringify(stats)}`)

    // Stampede: every process asks for one uncached key 250 times at once.
    for (let i = 0; i < STAMPEDE_PROCESSES; i++) children.push(await startWorker(server.port, table))
    for (const lock of [true, false]) {
      const perProcess: number[] = []
      let worstTotal = 0
      for (let round = 0; round < STAMPEDE_ROUNDS; round++) {
        const id = String(1 + ((round * 104_729 + (lock ? 0 : 500_000)) % USERS))
        const before = table.queries
        const loads = await Promise.all(children.map((child) => ask(child, { id, lock, requests: STAMPEDE_REQUESTS / STAMPEDE_PROCESSES })))
        worstTotal = Math.max(worstTotal, table.queries - before)
        perProcess.push(...loads)
      }
      report.add({
        suite: 'guard',
        task: `stampede: ${STAMPEDE_REQUESTS} concurrent gets of one uncached key, ${STAMPEDE_PROCESSES} processes, ${STAMPEDE_ROUNDS} rounds`,
        subject: lock ? 'guard (Redis lock)' : 'guard, lock: false',
        batch: 1,
        opsPerSecond: 0,
        notes: `loads per process at most ${Math.max(...perProcess)}; loads in all at most ${worstTotal}`,
      })
    }
    await guard.close()
  } finally {
    for (const child of children) child.kill()
    redis.disconnect()
    await server.stop()
  }
}

const workerPath = fileURLToPath(new URL('./guard-stampede-worker.js', import.meta.url))

/** A process with a CacheGuard whose loads this process answers from the table (counted). */
async function startWorker(port: number, table: UsersTable): Promise<ChildProcess> {
  const child = fork(workerPath, [String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  child.on('message', async (message: { type: string; ref: number; id: string }) => {
    if (message.type === 'load') child.send({ type: 'loaded', ref: message.ref, row: await table.user(message.id) })
  })
  await new Promise<void>((resolve, reject) => {
    child.once('message', (message: { type: string }) => (message.type === 'ready' ? resolve() : reject(new Error(message.type))))
    child.once('exit', (code) => reject(new Error(`stampede worker exited with ${code}`)))
  })
  return child
}

/** Has the worker send `requests` concurrent gets of `id`; resolves to the loads it made. */
function ask(child: ChildProcess, job: { id: string; lock: boolean; requests: number }): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (message: { type: string; loads: number }) => {
      if (message.type !== 'done') return
      child.off('message', onMessage)
      resolve(message.loads)
    }
    child.on('message', onMessage)
    child.send({ type: 'go', ...job })
  })
}
