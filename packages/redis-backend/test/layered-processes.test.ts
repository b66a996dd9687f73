import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, inject, test } from 'vitest'
import { compoundErrorRate } from '@bloomkit/core/store'
import { estimateErrorRate } from '@bloomkit/core'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import { chernoffInterval } from '../../../test-support/chernoff.js'
import { layeredCheck } from './support/independent.js'
import { standaloneClient, uniqueName } from './support/clients.js'

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

test('4 processes adding disjoint keys from capacity 1000 to 200 000 keys end with one layer list, no false negative, and the error bound', async () => {
  const name = uniqueName('layered-processes')
  const capacity = 1000
  const errorRate = 0.01
  const perWorker = 50_000
  const batch = 1000
  const filter = await RedisBloomFilter.create(redis, name, { capacity, errorRate, growth: 2, seed: 5 })
  const { port } = inject('redisStandalone')
  await Promise.all(
    Array.from({ length: 4 }, (_, worker) =>
      run('node', ['test/support/layered-add-worker.mjs', String(port), name, String(worker), String(perWorker), String(batch)], { cwd: packageDir }),
    ),
  )
  // Racing growers kept the meta's check (docs/SPEC.md 9.8) in their scripts: a fresh open verifies it.
  const meta = await redis.hgetall(`${name}:meta`)
  expect(meta.check).toBe(layeredCheck(meta))
  const fresh = await RedisLayeredFilter.open(redis, name)
  const layers = await fresh.layers()
  // One list: layer ids 1, 2, 3, … with no gap (no racing grower's extra layer), capacities doubling.
  const ids = String(await redis.hget(`${name}:meta`, 'layers')).split(',').map((entry) => Number(entry.split('/')[0]))
  expect(ids).toEqual(layers.map((_, i) => i + 1))
  expect(layers.map((layer) => layer.capacity)).toEqual(layers.map((_, i) => capacity * 2 ** i))
  expect(layers.length).toBe(8) // 1k + 2k + … + 64k = 127k < 200k ≤ 255k (full layers at 99 % or more)
  // No layer took more than its capacity (adds reserve room first); every full one took nearly all of it.
  for (const layer of layers) expect(layer.count).toBeLessThanOrEqual(layer.capacity)
  for (const layer of layers.slice(0, -1)) expect(layer.count).toBeGreaterThanOrEqual(layer.capacity * 0.99)
  for (let worker = 0; worker < 4; worker++) {
    const keys = Array.from({ length: perWorker }, (_, i) => `w${worker}:${i}`)
    expect((await fresh.hasMany(keys)).every(Boolean), `worker ${worker}`).toBe(true)
  }
  const probes = 200_000
  const answers = await fresh.hasMany(Array.from({ length: probes }, (_, i) => `absent:${i}`))
  const positives = answers.filter(Boolean).length
  const model = compoundErrorRate(layers.map((layer) => estimateErrorRate({ ...layer.parameters, items: layer.count })))
  const [low, high] = chernoffInterval(model * probes)
  const [, bound] = chernoffInterval(errorRate * probes)
  console.log(`4 processes, ${layers.length} layers: measured ${(positives / probes).toExponential(3)}, model ${model.toExponential(3)}, allowed [${(low / probes).toExponential(3)}, ${(high / probes).toExponential(3)}]`)
  expect(model).toBeLessThan(errorRate)
  expect(positives).toBeGreaterThanOrEqual(low)
  expect(positives).toBeLessThanOrEqual(high)
  expect(positives).toBeLessThanOrEqual(bound)
  await fresh.destroy()
  await filter.close()
}, 240_000)
