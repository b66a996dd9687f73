import { afterAll, describe, expect, test } from 'vitest'
import { estimateErrorRate } from '@bloomkit/core'
import { LayeredLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { describeResult, layeredModelRate, measureCell, STORE_GRID, type GridFactory } from '../../../test-support/fpr-grid.js'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

const level: GridFactory = async (cell, seed) => {
  const folder = folders.path()
  if (cell.growth === undefined) {
    const filter = await LevelBloomFilter.create(folder, { capacity: cell.capacity, errorRate: cell.errorRate, layout: cell.layout, seed })
    return {
      addMany: (keys) => filter.addMany(keys),
      hasMany: (keys) => filter.hasMany(keys),
      modelRate: (added) => estimateErrorRate({ ...filter.parameters, items: added }),
      errorRate: () => filter.errorRate(),
      close: () => filter.close(),
    }
  }
  const filter = await LayeredLevelFilter.create(folder, { capacity: cell.capacity, errorRate: cell.errorRate, growth: cell.growth, seed })
  return {
    addMany: (keys) => filter.addMany(keys),
    hasMany: (keys) => filter.hasMany(keys),
    modelRate: async () => layeredModelRate(await filter.layers()),
    errorRate: () => filter.errorRate(),
    close: () => filter.close(),
  }
}

// The persistent stores run a subset of the grid (test-support/fpr-grid.ts says why); the memory store runs it all.
describe('false-positive grid on LevelDB folders: every cell within its bounds', () => {
  test.each(STORE_GRID.map((cell) => [cell.name, cell] as const))('%s', async (_, cell) => {
    const result = await measureCell(cell, level)
    console.log(describeResult(result))
    expect(result.positives).toBeLessThanOrEqual(result.model.high)
    expect(result.positives).toBeLessThanOrEqual(result.actual.high)
    expect(result.model.mu / result.probes).toBeLessThanOrEqual(cell.errorRate)
  }, 120_000)
})
