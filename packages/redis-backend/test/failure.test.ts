import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { startRedisServer, type RedisServerHandle } from '../../../test-support/redis-servers.js'

const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function settle(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const start = performance.now()
  const error = await promise.then(() => undefined, (e: unknown) => e)
  return { error, ms: performance.now() - start }
}

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

test('a server killed mid-batch: calls reject in bounded time with BLOOM_STORE_UNAVAILABLE, then work again after restart', async () => {
  // A dedicated server with an append-only file, so a restart brings the bits back.
  const dir = await mkdtemp(join(tmpdir(), 'bloomkit-redis-kill-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const persistent = ['--appendonly', 'yes', '--appendfsync', 'always']
  let server: RedisServerHandle = await startRedisServer({ dir, args: persistent })
  cleanups.push(() => server.stop())
  // The client options the README asks for: fail a command fast, keep reconnecting in the background.
  const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 1000, retryStrategy: () => 100 })
  redis.on('error', () => {})
  cleanups.push(async () => redis.disconnect())
  const filter = await RedisBloomFilter.create(redis, 'killed', { capacity: 300_000, errorRate: 0.01, shards: 4, timeout: 1500 })
  const acknowledged = keys('before', 5000)
  await filter.addMany(acknowledged)

  // Observed from the start: the batch may fail while the server is still being killed.
  const big = settle(filter.addMany(keys('during', 300_000)))
  await new Promise((resolve) => setTimeout(resolve, 30))
  await server.kill()
  const during = await big
  expect(during.error).toBeInstanceOf(BloomError)
  expect((during.error as BloomError).code).toBe('BLOOM_STORE_UNAVAILABLE')
  expect((during.error as BloomError).cause).toBeDefined()

  const down = await settle(filter.has(acknowledged[0]))
  expect((down.error as BloomError).code).toBe('BLOOM_STORE_UNAVAILABLE')
  expect(down.ms).toBeLessThan(2500)

  server = await startRedisServer({ port: server.port, dir, args: persistent })
  // ioredis reconnects by itself; the first calls may still fail while it does.
  let answers: boolean[] | undefined
  for (let attempt = 0; attempt < 50 && answers === undefined; attempt++) {
    answers = await filter.hasMany(acknowledged).catch(async (error: unknown) => {
      expect((error as BloomError).code).toBe('BLOOM_STORE_UNAVAILABLE')
      await new Promise((resolve) => setTimeout(resolve, 100))
      return undefined
    })
  }
  expect(answers?.every(Boolean)).toBe(true)
  const retried = keys('during', 300_000).slice(0, 20_000)
  await filter.addMany(retried)
  expect((await filter.hasMany(retried)).every(Boolean)).toBe(true)

  // Restarted without its data (no persistence, a failover to an empty replica): never "absent".
  await server.kill()
  server = await startRedisServer({ port: server.port })
  let lost: unknown
  for (let attempt = 0; attempt < 50; attempt++) {
    lost = await filter.has(acknowledged[0]).then(() => undefined, (e: unknown) => e)
    if ((lost as BloomError).code !== 'BLOOM_STORE_UNAVAILABLE') break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect((lost as BloomError).code).toBe('BLOOM_DATA_LOST')
}, 60_000)

test('with ioredis defaults (which would wait ~74 s), the store timeout still bounds a call', async () => {
  const server = await startRedisServer()
  const redis = new Redis({ host: server.host, port: server.port })
  redis.on('error', () => {})
  try {
    const filter = await RedisBloomFilter.create(redis, 'defaults', { capacity: 1000, errorRate: 0.01, timeout: 700 })
    await server.stop()
    const down = await settle(filter.has('x'))
    expect((down.error as BloomError).code).toBe('BLOOM_STORE_UNAVAILABLE')
    expect((down.error as BloomError).message).toMatch(/700 ms/)
    expect(down.ms).toBeLessThan(1500)
  } finally {
    redis.disconnect()
    await server.stop()
  }
})
