// One service instance of the multi-process tests: a CacheGuard over a shared RedisBloomFilter and
// the shared Redis cache, whose `load` asks the parent process, which holds the real database
// (PGlite runs in one process) and counts every query. Runs on the built package (dist).
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { CacheGuard } from '../../dist/index.js'

const { port, filterName } = JSON.parse(process.argv[2])
const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, connectTimeout: 1000 })
redis.on('error', () => {})
const filter = await RedisBloomFilter.open(redis, filterName)

let nextRef = 0
const pendingLoads = new Map()
const load = (id) =>
  new Promise((resolve, reject) => {
    const ref = nextRef++
    pendingLoads.set(ref, { resolve, reject })
    process.send({ type: 'load', ref, id })
  })
// One guard per name, made on first use with the options the test gives. Generous timeouts: on a
// loaded machine a Redis call can take longer than the default 250 ms, and the guard would then
// (correctly) load without the lock, which is not what these tests are about.
const guards = new Map()
const guardFor = ({ name, options }) => {
  if (!guards.has(name)) guards.set(name, new CacheGuard({ filter, cache: redis, name, load, cacheTimeout: 5000, filterTimeout: 5000, ...options }))
  return guards.get(name)
}

const ops = {
  get: (guard, { id, count }) => Promise.all(Array.from({ length: count ?? 1 }, () => guard.get(id))),
  created: (guard, { id }) => guard.created(id),
  invalidate: (guard, { id }) => guard.invalidate(id),
  stats: (guard) => guard.stats(),
}

process.on('message', async (message) => {
  if (message.type === 'loaded' || message.type === 'loadFailed') {
    const pending = pendingLoads.get(message.ref)
    pendingLoads.delete(message.ref)
    if (message.type === 'loaded') pending.resolve(message.row)
    else pending.reject(new Error(message.message))
    return
  }
  if (message.type === 'stop') {
    await Promise.all([...guards.values()].map((guard) => guard.close()))
    redis.disconnect()
    process.disconnect()
    return
  }
  try {
    process.send({ type: 'result', ref: message.ref, value: (await ops[message.op](guardFor(message.guard), message)) ?? null })
  } catch (error) {
    process.send({ type: 'error', ref: message.ref, code: error.code, message: error.message })
  }
})
process.send({ type: 'ready' })
