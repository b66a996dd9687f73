import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, inject, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { standaloneClient, uniqueName } from './clients.js'

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL('..', import.meta.url))
const redis = standaloneClient()

beforeAll(async () => {
  // The worker processes run the built package; build it (a no-op when dist is current).
  await run('npx', ['tsc', '-b', '.'], { cwd: packageDir })
}, 120_000)
afterAll(async () => {
  await redis.quit()
})

test('four client processes adding at once lose nothing', async () => {
  const name = uniqueName('processes')
  const perWorker = 25_000
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 100_000, errorRate: 0.01, shards: 3 })
  const { port } = inject('redisStandalone')
  await Promise.all(
    Array.from({ length: 4 }, (_, worker) => run('node', ['test/add-worker.mjs', String(port), name, String(worker), String(perWorker)], { cwd: packageDir })),
  )
  for (let worker = 0; worker < 4; worker++) {
    const keys = Array.from({ length: perWorker }, (_, i) => `w${worker}:${i}`)
    expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
  }
  const estimate = await filter.estimateCount()
  expect(Math.abs(estimate - 4 * perWorker)).toBeLessThan(2000)
  await filter.destroy()
}, 120_000)
