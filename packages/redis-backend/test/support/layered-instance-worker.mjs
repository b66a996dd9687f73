// A layered filter instance in another process, driven line by line over stdin: it opens the
// filter once and keeps it (and so its list of layers, however stale) until stdin closes.
// Argument: JSON { cluster: boolean, nodes: [{ host, port }], name }.
// Each request line: JSON { op: 'add' | 'has', keys: [...] }; each reply line: JSON { answers }
// or { error: code, message }. The first line written is { ready: true }. Runs on the built package (dist).
import { createInterface } from 'node:readline'
import { Cluster, Redis } from 'ioredis'
import { LayeredRedisFilter } from '../../dist/index.js'

const { cluster, nodes, name } = JSON.parse(process.argv[2])
const fastFail = { maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (times) => Math.min(times * 50, 500) }
const redis = cluster
  ? new Cluster(nodes, { redisOptions: fastFail, clusterRetryStrategy: (times) => (times > 20 ? null : 100) })
  : new Redis({ ...nodes[0], ...fastFail })
redis.on('error', () => {})
const filter = await LayeredRedisFilter.open(redis, name)
process.stdout.write(JSON.stringify({ ready: true }) + '\n')
for await (const line of createInterface({ input: process.stdin })) {
  const { op, keys } = JSON.parse(line)
  try {
    const answers = op === 'add' ? await filter.addMany(keys) : await filter.hasMany(keys)
    process.stdout.write(JSON.stringify({ answers }) + '\n')
  } catch (error) {
    process.stdout.write(JSON.stringify({ error: error.code ?? 'UNCODED', message: String(error.message) }) + '\n')
  }
}
await filter.close()
redis.disconnect()
