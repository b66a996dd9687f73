import { describe, expect, test } from 'vitest'
import { sizeFilter } from '@bloomkit/core'
import { adoptsStored, newFilterParameters, randomSeed } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'

describe('keyed hashing by default', () => {
  test('a filter created without a seed gets a random, non-zero secret seed, kept in its snapshot', async () => {
    const one = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
    const two = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
    expect(one.parameters.seed).not.toBe(0)
    expect(two.parameters.seed).not.toBe(one.parameters.seed)
    one.add('user:42')
    const copy = await MemoryBloomFilter.import(one.export())
    expect(copy.parameters.seed).toBe(one.parameters.seed)
    expect(copy.has('user:42')).toBe(true)
  })

  test('seed: 0 (or any number) keeps filters reproducible: the same keys give the same bytes', async () => {
    for (const seed of [0, 12345]) {
      const one = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01, seed })
      const two = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01, seed })
      expect(one.parameters.seed).toBe(seed)
      one.addMany(['a', 'b', 'c'])
      two.addMany(['a', 'b', 'c'])
      expect(two.export()).toEqual(one.export())
    }
  })

  test('sizeFilter stays pure: it reports the seed it was given, 0 when none', () => {
    expect(sizeFilter({ capacity: 1000, errorRate: 0.01 }).seed).toBe(0)
    expect(sizeFilter({ capacity: 1000, errorRate: 0.01, seed: 7 }).seed).toBe(7)
  })

  test('randomSeed spreads over 32 bits and is never 0', () => {
    const seeds = Array.from({ length: 1000 }, randomSeed)
    expect(new Set(seeds).size).toBeGreaterThan(995)
    expect(seeds.every((seed) => Number.isInteger(seed) && seed > 0 && seed <= 0xffffffff)).toBe(true)
    expect(seeds.some((seed) => seed > 0x7fffffff)).toBe(true)
  })

  test('a create without a seed adopts a stored filter that differs only in its seed; a create with a seed does not', () => {
    const unseeded = newFilterParameters({ capacity: 1000, errorRate: 0.01 })
    const stored = { ...unseeded.parameters, seed: 99 }
    expect(unseeded.seeded).toBe(false)
    expect(adoptsStored(unseeded.parameters, stored, unseeded.seeded)).toBe(true)
    expect(adoptsStored(unseeded.parameters, { ...stored, hashes: stored.hashes + 1 }, unseeded.seeded)).toBe(false)
    const seeded = newFilterParameters({ capacity: 1000, errorRate: 0.01, seed: 5 })
    expect(seeded.parameters.seed).toBe(5)
    expect(adoptsStored(seeded.parameters, stored, seeded.seeded)).toBe(false)
    expect(adoptsStored(seeded.parameters, { ...stored, seed: 5 }, seeded.seeded)).toBe(true)
  })
})
