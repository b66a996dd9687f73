// One writer of the replica lag row (redis-replica-lag.ts): a process of its own that adds batches
// of new keys to the filter through the server path at a fixed pace, and after each acknowledged
// batch tells the parent its last key and when the add was acknowledged (epoch ms, the clock every
// process of the machine shares), so that the parent can time how long its replica took to show it.
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'

/** What the parent sends to start the writes. */
export interface WriterOrder {
  readonly type: 'go'
  /** Keys per addMany call. */
  readonly batch: number
  /** Milliseconds between the starts of two calls (the pace; a late call starts at once). */
  readonly intervalMs: number
  /** How long to write, in ms. */
  readonly durationMs: number
  /** Prefix of this writer's keys, so writers never add the same key. */
  readonly prefix: string
}

/** What the writer sends back. */
export type WriterMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'added'; readonly key: string; readonly at: number }
  | { readonly type: 'done'; readonly keys: number; readonly cpuUs: number }

const [port, name] = process.argv.slice(2)
const redis = new Redis({ host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: 1, connectTimeout: 2000 })
const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
const send = (message: WriterMessage) => process.send!(message)
const wallClock = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

process.on('message', async ({ batch, intervalMs, durationMs, prefix }: WriterOrder) => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  let keys = 0
  for (let call = 0; performance.now() - start < durationMs; call++) {
    const wait = start + call * intervalMs - performance.now()
    if (wait > 0) await sleep(wait)
    const batchKeys = Array.from({ length: batch }, (_, i) => `${prefix}:${keys + i}`)
    await filter.addMany(batchKeys)
    send({ type: 'added', key: batchKeys[batch - 1], at: wallClock() })
    keys += batch
  }
  const used = process.cpuUsage(cpu)
  send({ type: 'done', keys, cpuUs: used.user + used.system })
  await filter.close()
  redis.disconnect()
  process.disconnect()
})
send({ type: 'ready' })
