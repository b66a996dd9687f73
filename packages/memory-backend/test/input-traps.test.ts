import { BloomError } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { expect, test } from 'vitest'

test('addMany and hasMany refuse a string where an iterable of keys is expected, and add nothing', async () => {
  const filter = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
  for (const call of [() => filter.addMany('abc' as never), () => filter.hasMany('abc' as never)]) {
    expect(call).toThrow(BloomError)
    expect(call).toThrow(expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringContaining('["abc"]') }))
  }
  expect(filter.hasMany(['a', 'b', 'c', 'abc'])).toEqual([false, false, false, false])
  expect(filter.addMany(['abc'])).toEqual([true])
  expect(() => filter.addMany(42 as never)).toThrow(expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER' }))
})

test('JSON.stringify(filter) throws, pointing at export()', async () => {
  const filter = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
  filter.add('k')
  expect(() => JSON.stringify(filter)).toThrow(TypeError)
  expect(() => JSON.stringify({ filter })).toThrow(/export\(\)/)
  // A layered filter too, empty or not (its own toJSON, not a layer's).
  const layered = await LayeredMemoryFilter.create({ capacity: 1000, errorRate: 0.01, growth: 2 })
  expect(() => layered.toJSON()).toThrow(/export\(\)/)
  expect(() => JSON.stringify({ layered })).toThrow(TypeError)
})
