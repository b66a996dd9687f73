// One client process of the layered concurrency test: opens the layered filter and adds its keys
// in batches of 1000, one batch in flight at a time. Runs on the built package (dist).
import { Redis } from 'ioredis'
import { RedisLayeredFilter } from '../../dist/index.js'

const [port, name, worker, count, batch] = process.argv.slice(2)
const redis = new Redis({ host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: 1 })
const filter = await RedisLayeredFilter.open(redis, name)
for (let at = 0; at < Number(count); at += Number(batch)) {
  const keys = Array.from({ length: Math.min(Number(batch), Number(count) - at) }, (_, i) => `w${worker}:${at + i}`)
  await filter.addMany(keys)
}
redis.disconnect()
