import { execFile as execFileCallback } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { BloomError } from '@bloomkit/core'
import { RedisBloomFilter, type RedisClient } from '@bloomkit/redis-backend'
import { Cluster, Redis } from 'ioredis'
import { Redis as Redis5, Cluster as Cluster5 } from 'ioredis5'
import { createClient } from 'redis'
import { expect, expectTypeOf, test } from 'vitest'
import { standaloneClient, uniqueName } from './support/clients.js'

test('ioredis 5 and 6 clients, standalone and Cluster, are RedisClients without a cast', () => {
  expectTypeOf<Redis>().toExtend<RedisClient>()
  expectTypeOf<Cluster>().toExtend<RedisClient>()
  expectTypeOf<Redis5>().toExtend<RedisClient>()
  expectTypeOf<Cluster5>().toExtend<RedisClient>()
})

test('under exactOptionalPropertyTypes, ioredis 5 and 6 clients still type-check as RedisClients (tsc)', async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const fixture = fileURLToPath(new URL('fixtures/exact-optional-clients.ts', import.meta.url))
  const flags = ['--noEmit', '--strict', '--exactOptionalPropertyTypes', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node']
  const result = await promisify(execFileCallback)(process.execPath, [tsc, ...flags, fixture]).catch((error: { stdout: string }) => error)
  expect(result.stdout).toBe('')
}, 60_000)

test('the ioredis this project runs is the major it names (6, or 5 in the redis-ioredis5 project)', async () => {
  const { version } = (await import('ioredis/package.json', { with: { type: 'json' } })).default as { version: string }
  expect(version.split('.')[0]).toBe(process.env.IOREDIS_MAJOR ?? '6')
})

test('a node-redis client is refused up front, with a coded error saying what to pass', async () => {
  const nodeRedis = createClient({ url: 'redis://127.0.0.1:1' }) // never connected
  const attempt = RedisBloomFilter.create(nodeRedis as never, uniqueName('node-redis'), { capacity: 1000, errorRate: 0.01 })
  await expect(attempt).rejects.toBeInstanceOf(BloomError)
  await expect(attempt).rejects.toMatchObject({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringMatching(/node-redis.*new Redis\(…\) or new Cluster\(…\) from 'ioredis'|new Redis\(…\) or new Cluster\(…\) from 'ioredis'.*node-redis/) })
  await expect(RedisBloomFilter.open({} as never, 'x')).rejects.toMatchObject({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringContaining("from 'ioredis'") })
})

test('a filter works end to end over the ioredis this project runs', async () => {
  const redis = standaloneClient()
  try {
    const filter = await RedisBloomFilter.create(redis, uniqueName('clients'), { capacity: 10_000, errorRate: 0.01 })
    expect(await filter.addMany(['a', 'b', 'a'])).toEqual([true, true, false])
    expect(await filter.hasMany(['a', 'b', 'c'])).toEqual([true, true, false])
    await filter.destroy()
  } finally {
    await redis.quit()
  }
})
