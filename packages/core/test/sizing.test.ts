import { describe, expect, test } from 'vitest'
import { BLOCKED_MAX_OVERHEAD, estimateErrorRate, optimalCapacity, optimalParameters, sizeFilter, MAX_SHARD_BITS, type SizingOptions } from '@bloomkit/core'

/**
 * [n, p, bits, hashes] as Guava 31.1 computes them (BloomFilter.optimalNumOfBits and
 * optimalNumOfHashFunctions, called by reflection from Debian's libguava-java; the program is in
 * docs/guava-sizes.java). Redisson uses the same two formulas.
 */
const GUAVA: Array<[number, number, number, number]> = [
  [1, 0.5, 1, 1],
  [1, 0.1, 4, 3],
  [1, 0.03, 7, 5],
  [1, 0.01, 9, 6],
  [1, 0.001, 14, 10],
  [1, 1.0E-4, 19, 13],
  [1, 1.0E-6, 28, 19],
  [10, 0.5, 14, 1],
  [10, 0.1, 47, 3],
  [10, 0.03, 72, 5],
  [10, 0.01, 95, 7],
  [10, 0.001, 143, 10],
  [10, 1.0E-4, 191, 13],
  [10, 1.0E-6, 287, 20],
  [1000, 0.5, 1442, 1],
  [1000, 0.1, 4792, 3],
  [1000, 0.03, 7298, 5],
  [1000, 0.01, 9585, 7],
  [1000, 0.001, 14377, 10],
  [1000, 1.0E-4, 19170, 13],
  [1000, 1.0E-6, 28755, 20],
  [12345, 0.5, 17810, 1],
  [12345, 0.1, 59163, 3],
  [12345, 0.03, 90099, 5],
  [12345, 0.01, 118327, 7],
  [12345, 0.001, 177491, 10],
  [12345, 1.0E-4, 236655, 13],
  [12345, 1.0E-6, 354982, 20],
  [1000000, 0.5, 1442695, 1],
  [1000000, 0.1, 4792529, 3],
  [1000000, 0.03, 7298440, 5],
  [1000000, 0.01, 9585058, 7],
  [1000000, 0.001, 14377587, 10],
  [1000000, 1.0E-4, 19170116, 13],
  [1000000, 1.0E-6, 28755175, 20],
  [10000000, 0.5, 14426950, 1],
  [10000000, 0.1, 47925291, 3],
  [10000000, 0.03, 72984408, 5],
  [10000000, 0.01, 95850583, 7],
  [10000000, 0.001, 143775875, 10],
  [10000000, 1.0E-4, 191701167, 13],
  [10000000, 1.0E-6, 287551751, 20],
  [50000000, 0.5, 72134752, 1],
  [50000000, 0.1, 239626459, 3],
  [50000000, 0.03, 364922041, 5],
  [50000000, 0.01, 479252918, 7],
  [50000000, 0.001, 718879378, 10],
  [50000000, 1.0E-4, 958505837, 13],
  [50000000, 1.0E-6, 1437758756, 20],
  [1000000000, 0.5, 1442695040, 1],
  [1000000000, 0.1, 4792529188, 3],
  [1000000000, 0.03, 7298440837, 5],
  [1000000000, 0.01, 9585058377, 7],
  [1000000000, 0.001, 14377587566, 10],
  [1000000000, 1.0E-4, 19170116754, 13],
  [1000000000, 1.0E-6, 28755175132, 20],
]

const invalidParameter = (name: string) => expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringContaining(name) })

describe('optimalParameters', () => {
  test.each(GUAVA)('n=%d p=%d gives Guava’s %d bits and %d hashes', (capacity, errorRate, bits, hashes) => {
    expect(optimalParameters({ capacity, errorRate })).toEqual({ bits, hashes })
  })

  test('the issue’s example', () => {
    expect(optimalParameters({ capacity: 1_000_000, errorRate: 0.01 })).toEqual({ bits: 9585058, hashes: 7 })
  })

  test.each([
    [{ capacity: 0, errorRate: 0.01 }, 'capacity'],
    [{ capacity: -5, errorRate: 0.01 }, 'capacity'],
    [{ capacity: 1.5, errorRate: 0.01 }, 'capacity'],
    [{ capacity: 2 ** 53, errorRate: 0.01 }, 'capacity'],
    [{ capacity: Number.NaN, errorRate: 0.01 }, 'capacity'],
    [{ capacity: '1000', errorRate: 0.01 }, 'capacity'],
    [{ capacity: 1000, errorRate: 0 }, 'errorRate'],
    [{ capacity: 1000, errorRate: 1 }, 'errorRate'],
    [{ capacity: 1000, errorRate: -0.1 }, 'errorRate'],
    [{ capacity: 1000, errorRate: Number.NaN }, 'errorRate'],
    [{ capacity: 1000 }, 'errorRate'],
  ])('%o is refused, naming %s and its range', (options, name) => {
    expect(() => optimalParameters(options as never)).toThrowError(invalidParameter(name))
    expect(() => optimalParameters(options as never)).toThrowError(/must be/)
  })
})

describe('optimalCapacity', () => {
  test.each(GUAVA.filter(([n]) => n >= 1000))('inverts the sizing: n=%d p=%d', (capacity, errorRate, bits) => {
    const back = optimalCapacity({ bits, errorRate })
    expect(back).toBeGreaterThanOrEqual(capacity)
    expect(optimalParameters({ capacity: back, errorRate }).bits).toBeLessThanOrEqual(bits)
    expect(optimalParameters({ capacity: back + 1, errorRate }).bits).toBeGreaterThan(bits)
  })
})

describe('estimateErrorRate', () => {
  test('matches the textbook formula at large m', () => {
    const { bits, hashes } = optimalParameters({ capacity: 1_000_000, errorRate: 0.01 })
    const textbook = Math.pow(1 - Math.exp((-hashes * 1_000_000) / bits), hashes)
    expect(estimateErrorRate({ bits, hashes, items: 1_000_000 })).toBeCloseTo(textbook, 6)
    expect(estimateErrorRate({ bits, hashes, items: 0 })).toBe(0)
  })

  test('uneven shard loads cost error rate, more with fewer keys per shard', () => {
    const base = { bits: 1024 * 9600, hashes: 7, items: 1_000_000 }
    const one = estimateErrorRate(base)
    const few = estimateErrorRate({ ...base, shards: 8 })
    const many = estimateErrorRate({ ...base, shards: 1024 })
    expect(few).toBeGreaterThan(one)
    expect(many).toBeGreaterThan(few)
  })
})

describe('estimateErrorRate, blocked layout', () => {
  test('costs a little error rate against classic at the same bits, more at lower rates', () => {
    const at = (errorRate: number) => {
      const { bits, hashes } = optimalParameters({ capacity: 1_000_000, errorRate })
      const whole = Math.ceil(bits / 512) * 512
      return estimateErrorRate({ bits: whole, hashes, items: 1_000_000, layout: 'blocked' }) / estimateErrorRate({ bits: whole, hashes, items: 1_000_000 })
    }
    expect(at(0.01)).toBeGreaterThan(1)
    expect(at(0.01)).toBeLessThan(1.2)
    expect(at(0.0001)).toBeGreaterThan(at(0.01))
  })

  test('one block: every key shares it, so the rate is the fill of one block to the power k', () => {
    const rate = estimateErrorRate({ bits: 512, hashes: 3, items: 20, layout: 'blocked' })
    expect(rate).toBeCloseTo(Math.pow(1 - Math.pow(1 - 1 / 512, 60), 3), 12)
  })

  test('refuses bits that are not whole blocks', () => {
    expect(() => estimateErrorRate({ bits: 1000, hashes: 3, items: 20, layout: 'blocked' })).toThrowError(invalidParameter('bits'))
  })
})

describe('sizeFilter', () => {
  test('classic, one shard: Guava’s bits rounded up to whole bytes', () => {
    expect(sizeFilter({ capacity: 1_000_000, errorRate: 0.01, layout: 'classic' })).toEqual({ bits: 9585064, hashes: 7, shards: 1, seed: 0, layout: 'classic', scheme: 3 })
  })

  test('by default, blocked where it costs at most 10 % more bits than classic, classic below that', () => {
    for (const errorRate of [0.1, 0.01, 0.001]) {
      const sized = sizeFilter({ capacity: 1_000_000, errorRate })
      expect(sized.layout).toBe('blocked')
      expect(sized.bits).toBeLessThanOrEqual(optimalParameters({ capacity: 1_000_000, errorRate }).bits * (1 + BLOCKED_MAX_OVERHEAD))
    }
    expect(sizeFilter({ capacity: 1_000_000, errorRate: 1e-4 }).layout).toBe('classic')
    expect(sizeFilter({ capacity: 1_000_000, errorRate: 1e-4, layout: 'blocked' }).layout).toBe('blocked')
  })

  test.each([
    [1_000_000, 0.01, 16, 'classic'],
    [10_000, 0.01, 1024, 'classic'],
    [1_000_000_000, 0.001, 1024, 'classic'],
    [1_000_000, 0.01, 1, 'blocked'],
    [1_000_000, 0.01, 16, 'blocked'],
    [100, 0.01, 1, 'blocked'],
    [1_000_000, 1e-4, 1, 'blocked'],
    [1_000_000_000, 0.001, 1024, 'blocked'],
  ] as const)('n=%d p=%d over %d shard(s), %s: the smallest size whose expected error rate is no worse than Guava’s one shard', (capacity, errorRate, shards, layout) => {
    const guava = optimalParameters({ capacity, errorRate })
    const target = estimateErrorRate({ ...guava, items: capacity })
    const sized = sizeFilter({ capacity, errorRate, shards, layout })
    expect(sized.shards).toBe(shards)
    expect(sized.layout).toBe(layout)
    const unit = layout === 'blocked' ? 512 : 8
    expect((sized.bits / shards) % unit).toBe(0)
    expect(estimateErrorRate({ ...sized, items: capacity })).toBeLessThanOrEqual(target)
    // …and no bigger than it needs to be: 0.5 % fewer bits (or one block fewer per shard) would miss the target.
    const smaller = Math.min(Math.floor(((sized.bits / shards) * 0.995) / unit), sized.bits / shards / unit - 1) * unit * shards
    expect(estimateErrorRate({ bits: smaller, hashes: sized.hashes, shards, items: capacity, layout })).toBeGreaterThan(target)
  })

  test('a filter too big for one shard is split so no shard exceeds 2^32 bits', () => {
    const sized = sizeFilter({ capacity: 1_000_000_000, errorRate: 0.01 })
    expect(sized.shards).toBeGreaterThan(1)
    expect(sized.bits / sized.shards).toBeLessThanOrEqual(MAX_SHARD_BITS)
    expect(sized.bits).toBeGreaterThanOrEqual(optimalParameters({ capacity: 1_000_000_000, errorRate: 0.01 }).bits)
  })

  test.each([
    [{ capacity: 1000, errorRate: 0.01, shards: 0 }, 'shards'],
    [{ capacity: 1000, errorRate: 0.01, shards: 65_537 }, 'shards'],
    [{ capacity: 1000, errorRate: 0.01, shards: 2.5 }, 'shards'],
    [{ capacity: 1000, errorRate: 0.01, seed: -1 }, 'seed'],
    [{ capacity: 1000, errorRate: 0.01, seed: 2 ** 32 }, 'seed'],
    [{ capacity: 1000, errorRate: 1e-30 }, 'errorRate'],
    [{ capacity: 1e12, errorRate: 0.01, shards: 2 }, 'shards'],
    [{ capacity: 1000, errorRate: 0.01, layout: 'cache-line' }, 'layout'],
    [{ capacity: 1e14, errorRate: 0.01 }, 'capacity'],
    [{ capacity: 1e14, errorRate: 0.01, layout: 'classic' }, 'capacity'],
  ])('%o is refused, naming %s', (options, name) => {
    expect(() => sizeFilter(options as SizingOptions)).toThrowError(invalidParameter(name))
  })
})
