// One client process of the concurrency test: opens the filter and adds its keys in batches of
// varying size and as single calls, all in flight together. Runs on the built package (dist).
import { Redis } from 'ioredis'
import { RedisBloomFilter } from '../../dist/index.js'

const [port, name, worker, count] = process.argv.slice(2)
const redis = new Redis({ host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: 1 })
const filter = await RedisBloomFilter.open(redis, name)
const keys = Array.from({ length: Number(count) }, (_, i) => `w${worker}:${i}`)
const pending = []
for (let at = 0; at < keys.length; ) {
  const size = 1 + ((at * 7919) % 3000)
  const slice = keys.slice(at, at + size)
  pending.push(size % 5 === 0 ? Promise.all(slice.map((key) => filter.add(key))) : filter.addMany(slice))
  at += size
}
await Promise.all(pending)
redis.disconnect()
