import { describe, expect, test } from 'vitest'
import { estimateErrorRate, sizeFilter, type FilterParameters } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { describeResult, GRID, layeredModelRate, measureCell, type GridCell, type GridFactory, type GridFilter } from '../../../test-support/fpr-grid.js'

const fixed = (filter: MemoryBloomFilter): GridFilter => ({
  addMany: (keys) => filter.addMany(keys),
  hasMany: (keys) => filter.hasMany(keys),
  modelRate: (added) => estimateErrorRate({ ...filter.parameters, items: added }),
  errorRate: () => filter.errorRate(),
  close: () => filter.close(),
})

const memory: GridFactory = async (cell: GridCell, seed: number) => {
  if (cell.growth === undefined) return fixed(await MemoryBloomFilter.create({ capacity: cell.capacity, errorRate: cell.errorRate, layout: cell.layout, seed }))
  const filter = await LayeredMemoryFilter.create({ capacity: cell.capacity, errorRate: cell.errorRate, growth: cell.growth, seed })
  return {
    addMany: (keys) => filter.addMany(keys),
    hasMany: (keys) => filter.hasMany(keys),
    modelRate: () => layeredModelRate(filter.layers()),
    errorRate: () => filter.errorRate(),
    close: () => filter.close(),
  }
}

describe('false-positive grid on the memory store: every cell within its bounds', () => {
  test.each(GRID.map((cell) => [cell.name, cell] as const))('%s', async (_, cell) => {
    const result = await measureCell(cell, memory)
    console.log(describeResult(result))
    expect(result.positives).toBeLessThanOrEqual(result.model.high)
    expect(result.positives).toBeLessThanOrEqual(result.actual.high)
    // Where the count is large enough to say, it is not far below the model either (the model is not padded).
    if (result.model.mu >= 100) expect(result.positives).toBeGreaterThanOrEqual(result.model.low)
    // And the model at capacity meets the rate asked (a layered filter's layers sum below it).
    expect(result.model.mu / result.probes).toBeLessThanOrEqual(cell.errorRate)
  }, 120_000)
})

describe('the grid can fail', () => {
  test('classic hash scheme 1 (of earlier releases) at the sizes of cell "classic cap 1 @ 1e-3" is far outside both bounds', async () => {
    const cell = GRID.find((c) => c.name === 'classic cap 1 @ 1e-3')!
    const scheme1: GridFactory = async (_, seed) => {
      const parameters: FilterParameters = { ...sizeFilter({ capacity: cell.capacity, errorRate: cell.errorRate, layout: 'classic', seed }), scheme: 1 }
      return fixed(await MemoryBloomFilter.fromParameters(parameters))
    }
    const result = await measureCell(cell, scheme1)
    console.log(`scheme 1: ${describeResult(result)}`)
    expect(result.positives).toBeGreaterThan(3 * result.model.high)
    expect(result.positives).toBeGreaterThan(3 * result.actual.high)
  }, 120_000)
})
