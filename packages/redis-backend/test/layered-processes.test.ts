import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, inject, test } from 'vitest'
import { layeredFormat } from '@bloomkit/core/store'
// Not for backends, so not in @bloomkit/core/store: the test reads core's own rule.
import { compoundErrorRate } from '../../core/src/layered/layer-policy.js'
import { estimateErrorRate } from '@bloomkit/core'
import { RedisBloomFilter, RedisLayeredFilter } from '@bloomkit/redis-backend'
import { CHERNOFF_EPSILON } from '../../../test-support/chernoff.js'
import { layeredCheck } from './support/independent.js'
import { standaloneClient, uniqueName } from './support/clients.js'

const { decodeLayeredSnapshot } = layeredFormat

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

test('4 processes adding disjoint keys from capacity 1000 to 200 000 keys end with one layer list, no false negative, and each layer holding the bits of its count of keys', async () => {
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
  // Which keys each layer got depends on how the processes raced, so the layers are a different
  // filter each run: a probe count is not repeatable (a layer of 52 blocks has a rate that varies
  // ±10 % from one set of keys to another). What racing could break is the bits, and those are
  // repeatable: each layer holds the bits of its count of keys, within McDiarmid's bound.
  const { layers: stored } = decodeLayeredSnapshot(await fresh.export())
  for (const [i, layer] of stored.entries()) {
    const { bits, hashes, layout } = layer.parameters
    // Classic positions (docs/SPEC.md 4.3) spread over the whole layer and coincide about k²/2m of the time.
    const perKey = layout === 'blocked' ? distinctBlockPositions(hashes) : hashes
    const expected = bits * (1 - (1 - perKey / bits) ** layer.count)
    const slack = hashes * Math.sqrt((layer.count * Math.log(2 / CHERNOFF_EPSILON)) / 2)
    const set = popCount(layer.payload)
    console.log(`layer ${i + 1}: ${layer.count} keys, ${set} bits set, expected ${expected.toFixed(0)} ± ${slack.toFixed(0)}`)
    expect(Math.abs(set - expected), `layer ${i + 1}`).toBeLessThanOrEqual(slack)
  }
  const model = compoundErrorRate(layers.map((layer) => estimateErrorRate({ ...layer.parameters, items: layer.count })))
  expect(model).toBeLessThan(errorRate)
  await fresh.destroy()
  await filter.close()
}, 240_000)

/** Set bits in a payload. */
function popCount(bytes: Uint8Array): number {
  let count = 0
  for (let byte of bytes) for (; byte !== 0; byte &= byte - 1) count++
  return count
}

/**
 * The mean number of distinct positions one key sets in a blocked layer (docs/SPEC.md 4.2: the top
 * 9 bits of b, b·φ, b·φ², …, which may repeat), over 2^20 values of b spread evenly over 2^32.
 */
function distinctBlockPositions(hashes: number): number {
  const samples = 1 << 20
  const seen = new Uint8Array(512)
  let total = 0
  for (let s = 0; s < samples; s++) {
    let h = Math.imul(s, 4096) >>> 0
    seen.fill(0)
    for (let i = 0; i < hashes; i++) {
      total += seen[h >>> 23] ^ 1
      seen[h >>> 23] = 1
      h = Math.imul(h, 0x9e3779b9) >>> 0
    }
  }
  return total / samples
}
