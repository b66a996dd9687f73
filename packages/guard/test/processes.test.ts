import { RedisBloomFilter } from '@bloomkit/redis-backend'
import type { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, inject, test } from 'vitest'
import { GuardProcess } from './support/guard-processes.js'
import { redisClient, uniqueName } from './support/redis.js'
import { UsersDb } from './support/users-db.js'

// Service instances are child processes sharing one RedisBloomFilter and the Redis cache; the
// database (PGlite, in this process) answers their loads and counts them.
const ROWS = 1000
let db: UsersDb
let redis: Redis
let filterName: string
const running: GuardProcess[] = []

beforeAll(async () => {
  db = await UsersDb.create(ROWS)
  redis = redisClient()
  filterName = uniqueName('filter')
  const filter = await RedisBloomFilter.create(redis, filterName, { capacity: 10_000, errorRate: 0.01 })
  await filter.addMany(Array.from({ length: ROWS }, (_, i) => String(i + 1)))
})

afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.stop()))
  db.delayMs = 0
})

afterAll(async () => {
  redis.disconnect()
  await db.close()
})

async function instances(count: number, options: Record<string, unknown> = {}, guardName = uniqueName('guard')) {
  const port = inject('redisAddress').port
  const started = await Promise.all(Array.from({ length: count }, () => GuardProcess.start(db, { port, filterName, guardName, options })))
  running.push(...started)
  return started
}

describe('single flight across processes (behaviour 3)', () => {
  test('two processes stampeding one uncached key: one load in all, every answer the row', async () => {
    const [a, b] = await instances(2)
    db.delayMs = 100 // a slow query keeps the stampede window open
    const [fromA, fromB] = await Promise.all([a.get('77', 200), b.get('77', 200)])
    for (const user of [...fromA, ...fromB]) expect(user).toEqual({ id: '77', name: 'user 77' })
    expect(a.loads.length + b.loads.length).toBe(1)
    const [statsA, statsB] = await Promise.all([a.stats(), b.stats()])
    expect(statsA.loads + statsB.loads).toBe(1)
    expect(statsA.requests + statsB.requests).toBe(400)
  })

  test('with lock: false each process still loads at most once', async () => {
    const [a, b] = await instances(2, { lock: false })
    db.delayMs = 100
    await Promise.all([a.get('78', 200), b.get('78', 200)])
    expect(a.loads.length).toBeLessThanOrEqual(1)
    expect(b.loads.length).toBeLessThanOrEqual(1)
    expect(a.loads.length + b.loads.length).toBeGreaterThanOrEqual(1)
  })

  test('a lock holder that dies (SIGKILL mid-load) releases the key by lockTtl; the other process loads', async () => {
    const [holder, other] = await instances(2, { lockTtl: 500, lockWait: 5000 })
    holder.holdLoads = true
    const stuck = holder.get('79')
    stuck.catch(() => {})
    while (holder.loads.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const waiting = other.get('79')
    await new Promise((resolve) => setTimeout(resolve, 100))
    await holder.kill()
    expect(await waiting).toEqual([{ id: '79', name: 'user 79' }])
    expect(other.loads).toEqual(['79'])
    expect((await other.stats()).lockTimeouts).toBe(0)
  })
})

describe('created seen by another process (behaviour 4)', () => {
  test('a row inserted and created() in one process is found by a get in another once created resolves', async () => {
    const [writer, reader] = await instances(2)
    expect(await reader.get('fresh-1')).toEqual([null])
    await db.insert('fresh-1', 'Ada')
    await writer.created('fresh-1')
    expect(await reader.get('fresh-1')).toEqual([{ id: 'fresh-1', name: 'Ada' }])
  })

  test('created() in one process replaces the "absent" marker another process cached', async () => {
    const [writer, reader] = await instances(2, { nullTtl: 300 })
    await db.insert('again', 'first')
    await writer.created('again')
    await db.remove('again')
    await writer.invalidate('again')
    expect(await reader.get('again')).toEqual([null]) // loads, caches "absent" for 300 s
    expect(await reader.get('again')).toEqual([null])
    await db.insert('again', 'second')
    await writer.created('again')
    expect(await reader.get('again')).toEqual([{ id: 'again', name: 'second' }])
  })

  test('an update invalidated in one process is read fresh in another', async () => {
    const [writer, reader] = await instances(2)
    expect(await reader.get('5')).toEqual([{ id: '5', name: 'user 5' }])
    await db.rename('5', 'renamed')
    await writer.invalidate('5')
    expect(await reader.get('5')).toEqual([{ id: '5', name: 'renamed' }])
  })
})
