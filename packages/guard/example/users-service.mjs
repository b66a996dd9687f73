// A users service guarded by @bloomkit/guard, against a real PostgreSQL (PGlite, in-process) and
// Redis: a throwaway redis-server on loopback, or yours with REDIS_URL=redis://host:port.
// Run from the repository root: npm run example:guard
import { PGlite } from '@electric-sql/pglite'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { CacheGuard } from '@bloomkit/guard'
import { Redis } from 'ioredis'

const USERS = 50_000
const REQUESTS = 5_000

let server
let redisOptions
if (process.env.REDIS_URL) {
  redisOptions = process.env.REDIS_URL
} else {
  // The repository's private launcher (built by `pnpm run build`): a redis-server on a free port.
  const { startRedisServer } = await import('../../../test-support/dist/redis-servers.js')
  server = await startRedisServer()
  redisOptions = { host: server.host, port: server.port }
}
const redis = new Redis(redisOptions, { maxRetriesPerRequest: 1, connectTimeout: 2000 })
redis.on('error', () => {})

// PGlite sets up a fresh database on its first query (about 20 s): say so, or the example looks hung.
console.log(`PGlite: starting PostgreSQL in-process (about 20 s), then a users table of ${USERS.toLocaleString('en')} rows…`)
const pgliteStarted = performance.now()
const db = new PGlite()
await db.exec(`CREATE TABLE users AS SELECT g::text AS id, 'user ' || g AS name FROM generate_series(1, ${USERS}) g;
  ALTER TABLE users ADD PRIMARY KEY (id);`)
console.log(`PGlite: ready in ${((performance.now() - pgliteStarted) / 1000).toFixed(1)} s`)
let queries = 0
const loadUser = async (id) => {
  queries++
  return (await db.query('SELECT id, name FROM users WHERE id = $1', [id])).rows[0]
}

const name = `example:${process.pid}`
const filter = await RedisBloomFilter.create(redis, `${name}:ids`, { capacity: 100_000, errorRate: 0.01 })
const users = new CacheGuard({ filter, cache: redis, name, load: loadUser, ttl: 300, nullTtl: 30 })

async function* allIds() {
  let after = ''
  for (;;) {
    const { rows } = await db.query('SELECT id FROM users WHERE id > $1 ORDER BY id LIMIT 10000', [after])
    for (const row of rows) yield row.id
    if (rows.length < 10_000) return
    after = rows[rows.length - 1].id
  }
}
console.log(`warm: ${(await users.warm(allIds())).toLocaleString('en')} IDs into the Redis filter`)

// Traffic: half real users (a few hot ones), half an attack of IDs that do not exist. The same
// requests go once straight to the database (the baseline) and once through the guard.
const traffic = Array.from({ length: REQUESTS }, (_, i) =>
  i % 2 === 0 ? String(1 + Math.floor(USERS * Math.random() ** 4)) : `attacker-${i}-${Math.random()}`,
)
async function serve(get) {
  const before = queries
  const started = performance.now()
  let found = 0
  for (let i = 0; i < traffic.length; i += 100) {
    const answers = await Promise.all(traffic.slice(i, i + 100).map((id) => get(id)))
    found += answers.filter((user) => user !== undefined && user !== null).length
  }
  return { seconds: (performance.now() - started) / 1000, found, queries: queries - before }
}
const without = await serve(loadUser)
console.log(`without the guard: ${REQUESTS} requests (50 % attack) in ${without.seconds.toFixed(2)} s: ${without.found} users found, ${without.queries} database queries`)
const guarded = await serve((id) => users.get(id))
const stats = users.stats()
console.log(`with the guard:    ${REQUESTS} requests (50 % attack) in ${guarded.seconds.toFixed(2)} s: ${guarded.found} users found, ${guarded.queries} database queries`)
console.log(`  filtered ${stats.filtered}, cache hits ${stats.cacheHits}, cached absent ${stats.cachedAbsentHits}, loads ${stats.loads} (absent ${stats.loadedAbsent}), joined ${stats.joinedLoads}`)

// Writes: commit in the database first, then tell the guard.
await db.query('INSERT INTO users (id, name) VALUES ($1, $2)', ['new-1', 'Ada'])
await users.created('new-1')
console.log('after insert + created:', await users.get('new-1'))
await db.query('UPDATE users SET name = $2 WHERE id = $1', ['new-1', 'Ada L.'])
await users.invalidate('new-1')
console.log('after update + invalidate:', await users.get('new-1'))
await db.query('DELETE FROM users WHERE id = $1', ['new-1'])
await users.deleted('new-1')
console.log('after delete + deleted:', await users.get('new-1'))

await users.close()
await filter.destroy()
redis.disconnect()
await db.close()
await server?.stop()
