import { LayeredRedisFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { afterAll, expect, inject, test } from 'vitest'
import { runCli } from './support/run-cli.js'

// `bloomkit delete` of a layered Redis filter reports what it did (issue 33 item 16): every key
// goes, a damaged meta included, or it fails with the code and the filter stays to delete again.

const standalone = inject('cliRedis')
const url = `redis://${standalone.host}:${standalone.port}`
const redis = new Redis({ ...standalone, maxRetriesPerRequest: 1, connectTimeout: 2000 })
afterAll(() => redis.disconnect())

let run = 0
const fresh = () => `cli-delete-layered-${process.pid}-${++run}`
const left = async (name: string) => redis.keys(`${name}:*`)

async function twoWindows(name: string): Promise<void> {
  let now = 1_000 * 60_000
  const filter = await LayeredRedisFilter.create(redis, name, { capacity: 100, errorRate: 0.01, seed: 9, window: { seconds: 60, keep: 2 }, clock: () => now })
  await filter.addMany(['a', 'b', 'c'])
  now += 60_000
  await filter.addMany(['d', 'e'])
  await filter.close()
}

test('deletes a layered filter whose meta is damaged (a window past the last one), every layer with it', async () => {
  const name = fresh()
  await twoWindows(name)
  await redis.hset(`${name}:meta`, 'layers', '1/1000/0/100,2/10000000000000000/0/100')
  const result = await runCli(['delete', url, '--name', name, '--yes'])
  expect(result.stderr).toMatch(/deleted/)
  expect(result.code).toBe(0)
  expect(await left(name)).toEqual([])
})

test('a layer it cannot delete makes it fail with that code, leaving the filter to delete again', async () => {
  const name = fresh()
  await twoWindows(name)
  await redis.hdel(`${name}:L2:meta`, 'format')
  const result = await runCli(['delete', url, '--name', name, '--yes'])
  expect(result.code).not.toBe(0)
  expect(result.stderr).toMatch(/BLOOM_CORRUPT_STORE/)
  expect(await redis.exists(`${name}:meta`)).toBe(1)
  await redis.hset(`${name}:L2:meta`, 'format', '1')
  expect((await runCli(['delete', url, '--name', name, '--yes'])).code).toBe(0)
  expect(await left(name)).toEqual([])
})
