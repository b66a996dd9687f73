// One process of the replica property test (replica-processes.test.ts): a fixed filter instance,
// through a replica or not, driven over stdin. It may be SIGKILLed at any moment.
// Argument: JSON { cluster: boolean, nodes: [{ host, port }], name, replica: false | true | { maxStaleness } }.
// Request lines: JSON { id, op: 'add' | 'has' | 'status', keys, singles }; requests run concurrently.
// Reply lines: JSON { id, answers } | { id, status } | { id, error: code, message }; first { ready: true }.
// An instance that finds its filter gone or replaced (destroyed and created again) is opened again
// at the next request. Runs on the built package (dist).
import { createInterface } from 'node:readline'
import { Cluster, Redis } from 'ioredis'
import { RedisBloomFilter } from '../../dist/index.js'

const { cluster, nodes, name, replica } = JSON.parse(process.argv[2])
const fastFail = { maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: (times) => Math.min(times * 50, 500) }
const redis = cluster
  ? new Cluster(nodes, { redisOptions: fastFail, clusterRetryStrategy: (times) => (times > 200 ? null : 100) })
  : new Redis({ ...nodes[0], ...fastFail })
redis.on('error', () => {})

/** Codes after which this instance is done with: the next request opens the filter again. */
const REOPEN = new Set(['BLOOM_NOT_FOUND', 'BLOOM_DATA_LOST', 'BLOOM_INCOMPATIBLE', 'BLOOM_CORRUPT_STORE'])
const options = replica === false ? { kind: 'fixed' } : { kind: 'fixed', replica }
let filter
let opening

function current() {
  if (filter !== undefined) return Promise.resolve(filter)
  opening ??= RedisBloomFilter.open(redis, name, options).then(
    (opened) => {
      filter = opened
      opening = undefined
      return opened
    },
    (error) => {
      opening = undefined
      throw error
    },
  )
  return opening
}

async function answer({ op, keys, singles }) {
  const instance = await current()
  if (op === 'status') return { status: instance.replica ?? null }
  try {
    if (op === 'add') return { answers: singles ? await Promise.all(keys.map((key) => instance.add(key))) : await instance.addMany(keys) }
    return { answers: singles ? await Promise.all(keys.map((key) => instance.has(key))) : await instance.hasMany(keys) }
  } catch (error) {
    if (REOPEN.has(error?.code) && filter === instance) {
      filter = undefined
      void instance.close().catch(() => {})
    }
    throw error
  }
}

await current()
process.stdout.write(JSON.stringify({ ready: true }) + '\n')
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line)
  answer(request).then(
    (reply) => process.stdout.write(JSON.stringify({ id: request.id, ...reply }) + '\n'),
    (error) => process.stdout.write(JSON.stringify({ id: request.id, error: error?.code ?? 'UNCODED', message: String(error?.message ?? error) }) + '\n'),
  )
}
await filter?.close()
redis.disconnect()
