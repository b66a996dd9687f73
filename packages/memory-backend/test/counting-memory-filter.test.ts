import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { CountingBloomFilter, sizeFilter } from '@bloomkit/core'
import { createKeyHasher } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter, MemoryCounterStore } from '@bloomkit/memory-backend/counting'

describe('CountingMemoryFilter', () => {
  test('single-key calls (the in-place probe) and batches through the store (the kernels) leave identical counters', async () => {
    const hasher = await createKeyHasher(9)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('blocked' as const, 'classic' as const),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 30 })), { maxLength: 80 }),
        async (layout, ops) => {
          const parameters = { bits: layout === 'blocked' ? 1024 : 96, hashes: 6, shards: 2, seed: 9, layout }
          const probe = new CountingMemoryFilter(new MemoryCounterStore(parameters), hasher)
          // The base class's default hooks: every call a PositionBatch through MemoryCounterStore.
          const kernels = new CountingBloomFilter(new MemoryCounterStore(parameters), hasher)
          for (const [add, n] of ops) {
            const key = `k${n}`
            if (add) expect(probe.add(key)).toBe(kernels.add(key))
            else expect(probe.remove(key)).toBe(kernels.remove(key))
            expect(probe.has(key)).toBe(kernels.has(key))
          }
          expect(probe.export()).toEqual(kernels.export())
        },
      ),
      { seed: 20261125, numRuns: 200 },
    )
  })

  test('memory is exactly 4 bits per position', async () => {
    const filter = await CountingMemoryFilter.create({ capacity: 10_000, errorRate: 0.01, seed: 1 })
    const plain = await MemoryBloomFilter.create({ capacity: 10_000, errorRate: 0.01, seed: 1 })
    expect(filter.parameters).toEqual(plain.parameters)
    expect(filter.byteLength).toBe(filter.parameters.bits / 2)
    expect(filter.byteLength).toBe(plain.byteLength * 4)
    expect((filter as unknown as { counters: MemoryCounterStore }).counters.bytes.length).toBe(filter.parameters.bits / 2)
  })

  test('a plain filter imported from exportPlain answers every check as the counting filter does', async () => {
    const parameters = sizeFilter({ capacity: 2_000, errorRate: 0.05, seed: 4 })
    const counting = await CountingMemoryFilter.fromParameters(parameters)
    for (let i = 0; i < 2_000; i++) counting.add(`m:${i}`)
    counting.removeMany(Array.from({ length: 500 }, (_, i) => `m:${i}`))
    const plain = await MemoryBloomFilter.import(counting.exportPlain())
    const probes = Array.from({ length: 20_000 }, (_, i) => `p:${i}`).concat(Array.from({ length: 2_000 }, (_, i) => `m:${i}`))
    expect(plain.hasMany(probes)).toEqual(counting.hasMany(probes))
    expect(plain.estimateCount()).toBe(counting.estimateCount())
  })

  test('is synchronous, and MemoryBloomFilter.create refuses counting: true, pointing at the counting entry', async () => {
    const filter = await CountingMemoryFilter.create({ capacity: 100, errorRate: 0.01 })
    expect(filter.isSync).toBe(true)
    expect(filter.add('a')).toBe(true)
    expect(filter.remove('a')).toBe(true)
    await expect(MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01, counting: true } as never)).rejects.toMatchObject({
      code: 'BLOOM_INVALID_PARAMETER',
      message: expect.stringMatching(/@bloomkit\/memory-backend\/counting/),
    })
  })

  test('a plain filter has no remove (typed and at run time), and describeCounters reports saturated counters', async () => {
    const plain = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    // @ts-expect-error remove exists only on counting filters
    expect(plain.remove).toBeUndefined()
    const filter = CountingMemoryFilter.fromParametersSync({ bits: 64, hashes: 2, shards: 1, seed: 0 })
    for (let i = 0; i < 16; i++) filter.add('x')
    expect(filter.describeCounters()).toEqual({ counters: 64, nonZero: 2, saturated: 2 })
  })
})
