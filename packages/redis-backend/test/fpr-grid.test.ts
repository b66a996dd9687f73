import { afterAll, describe, expect, test } from 'vitest'
import { estimateErrorRate } from '@bloomkit/core'
import { RedisBloomFilter, LayeredRedisFilter } from '@bloomkit/redis-backend'
import { describeResult, layeredModelRate, measureCell, STORE_GRID, type GridFactory } from '../../../test-support/fpr-grid.js'
import { standaloneClient, uniqueName } from './support/clients.js'

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

const onRedis: GridFactory = async (cell, seed) => {
  const name = uniqueName('grid')
  if (cell.growth === undefined) {
    const filter = await RedisBloomFilter.create(redis, name, { capacity: cell.capacity, errorRate: cell.errorRate, layout: cell.layout, seed })
    return {
      addMany: (keys) => filter.addMany(keys),
      hasMany: (keys) => filter.hasMany(keys),
      modelRate: (added) => estimateErrorRate({ ...filter.parameters, items: added }),
      errorRate: () => filter.errorRate(),
      close: () => filter.destroy(),
    }
  }
  const filter = await LayeredRedisFilter.create(redis, name, { capacity: cell.capacity, errorRate: cell.errorRate, growth: cell.growth, seed })
  return {
    addMany: (keys) => filter.addMany(keys),
    hasMany: (keys) => filter.hasMany(keys),
    modelRate: async () => layeredModelRate(await filter.layers()),
    errorRate: () => filter.errorRate(),
    close: () => filter.destroy(),
  }
}

// The persistent stores run a subset of the grid (test-support/fpr-grid.ts says why); the memory store runs it all.
describe('false-positive grid on Redis (standalone): every cell within its bounds', () => {
  test.each(STORE_GRID.map((cell) => [cell.name, cell] as const))('%s', async (_, cell) => {
    const result = await measureCell(cell, onRedis)
    console.log(describeResult(result))
    expect(result.positives).toBeLessThanOrEqual(result.model.high)
    expect(result.positives).toBeLessThanOrEqual(result.actual.high)
    expect(result.model.mu / result.probes).toBeLessThanOrEqual(cell.errorRate)
  }, 120_000)
})
