// One service instance of the guard benchmark's stampede case: a CacheGuard over the shared
// RedisBloomFilter and Redis cache, whose loads the parent (which holds the PGlite table) answers.
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { CacheGuard } from '@bloomkit/guard'
import { Redis } from 'ioredis'

type User = { id: string; name: string }

const redis = new Redis({ host: '127.0.0.1', port: Number(process.argv[2]), maxRetriesPerRequest: 1, connectTimeout: 2000 })
const filter = await RedisBloomFilter.open(redis, 'bench:guard:ids', { kind: 'fixed' })
const pending = new Map<number, (user: User | null) => void>()
let nextRef = 0
const load = (id: string) =>
  new Promise<User | null>((resolve) => {
    const ref = nextRef++
    pending.set(ref, resolve)
    process.send!({ type: 'load', ref, id })
  })
const guards = {
  lock: new CacheGuard<User>({ filter, cache: redis, name: 'bench:stampede:lock', load }),
  noLock: new CacheGuard<User>({ filter, cache: redis, name: 'bench:stampede:nolock', load, lock: false }),
}

process.on('message', async (message: { type: string; ref: number; row: User | null; id: string; lock: boolean; requests: number }) => {
  if (message.type === 'loaded') {
    pending.get(message.ref)!(message.row)
    pending.delete(message.ref)
  } else if (message.type === 'go') {
    const guard = message.lock ? guards.lock : guards.noLock
    const before = guard.stats().loads
    const users = await Promise.all(Array.from({ length: message.requests }, () => guard.get(message.id)))
    if (users.some((user) => user?.id !== message.id)) throw new Error(`wrong answer for ${message.id}`)
    process.send!({ type: 'done', loads: guard.stats().loads - before })
  }
})
process.send!({ type: 'ready' })
