import { RedisBloomFilter } from '@bloomkit/redis-backend'
import type { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, inject, test } from 'vitest'
import { GuardProcess } from './support/guard-processes.js'
import { redisClient, uniqueName } from './support/redis.js'
import { ROWS, UsersDb } from './support/users-db.js'

// Service instances are child processes sharing one RedisBloomFilter and the Redis cache; the
// database (PGlite, in this process) answers their loads and counts them.
let db: UsersDb
let redis: Redis
let filterName: string
/** Two instances for the whole file; each test uses guards of its own name. */
let a: GuardProcess
let b: GuardProcess
const extra: GuardProcess[] = []

beforeAll(async () => {
  db = await UsersDb.create()
  redis = redisClient()
  filterName = uniqueName('filter')
  const filter = await RedisBloomFilter.create(redis, filterName, { capacity: 10_000, errorRate: 0.01 })
  await filter.addMany(Array.from({ length: ROWS }, (_, i) => String(i + 1)))
  ;[a, b] = await Promise.all([start(), start()])
})

afterEach(async () => {
  await Promise.all(extra.splice(0).map((instance) => instance.stop()))
  a.loads.length = 0
  b.loads.length = 0
  db.delayMs = 0
})

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
  redis.disconnect()
  await db.close()
})

function start(): Promise<GuardProcess> {
  return GuardProcess.start(db, { port: inject('redisAddress').port, filterName })
}

describe('single flight across processes (behaviour 3)', () => {
  test('two processes stampeding one uncached key: one load in all, every answer the row', async () => {
    const name = uniqueName('stampede')
    const [guardA, guardB] = [a.guard(name), b.guard(name)]
    db.delayMs = 100 // a slow query keeps the stampede window open
    const [fromA, fromB] = await Promise.all([guardA.get('77', 200), guardB.get('77', 200)])
    for (const user of [...fromA, ...fromB]) expect(user).toEqual({ id: '77', name: 'user 77' })
    expect(a.loads.length + b.loads.length).toBe(1)
    const [statsA, statsB] = await Promise.all([guardA.stats(), guardB.stats()])
    expect(statsA.loads + statsB.loads).toBe(1)
    expect(statsA.requests + statsB.requests).toBe(400)
  })

  test('with lock: false each process still loads at most once', async () => {
    const name = uniqueName('nolock')
    db.delayMs = 100
    await Promise.all([a.guard(name, { lock: false }).get('78', 200), b.guard(name, { lock: false }).get('78', 200)])
    expect(a.loads.length).toBeLessThanOrEqual(1)
    expect(b.loads.length).toBeLessThanOrEqual(1)
    expect(a.loads.length + b.loads.length).toBeGreaterThanOrEqual(1)
  })

  test('a lock holder that dies (SIGKILL mid-load) releases the key by lockTtl; the other process loads', async () => {
    const holder = await start()
    extra.push(holder)
    const name = uniqueName('deadholder')
    const options = { lockTtl: 500, lockWait: 5000 }
    holder.holdLoads = true
    const stuck = holder.guard(name, options).get('79')
    stuck.catch(() => {})
    while (holder.loads.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const other = a.guard(name, options)
    const waiting = other.get('79')
    await new Promise((resolve) => setTimeout(resolve, 100))
    await holder.kill()
    expect(await waiting).toEqual([{ id: '79', name: 'user 79' }])
    expect(a.loads).toEqual(['79'])
    expect((await other.stats()).lockTimeouts).toBe(0)
  })
})

describe('created seen by another process (behaviour 4)', () => {
  test('a row inserted and created() in one process is found by a get in another once created resolves', async () => {
    const name = uniqueName('created')
    const [writer, reader] = [a.guard(name), b.guard(name)]
    expect(await reader.get('fresh-1')).toEqual([null])
    await db.insert('fresh-1', 'Ada')
    await writer.created('fresh-1')
    expect(await reader.get('fresh-1')).toEqual([{ id: 'fresh-1', name: 'Ada' }])
  })

  test('created() in one process replaces the "absent" marker another process cached', async () => {
    const name = uniqueName('marker')
    const [writer, reader] = [a.guard(name, { nullTtl: 300 }), b.guard(name, { nullTtl: 300 })]
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
    const name = uniqueName('update')
    const [writer, reader] = [a.guard(name), b.guard(name)]
    expect(await reader.get('5')).toEqual([{ id: '5', name: 'user 5' }])
    await db.rename('5', 'renamed')
    await writer.invalidate('5')
    expect(await reader.get('5')).toEqual([{ id: '5', name: 'renamed' }])
  })
})
