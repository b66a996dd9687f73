import { describe, expect, test } from 'vitest'
import { BLOCKED_MAX_OVERHEAD, estimateErrorRate, optimalCapacity, optimalParameters, sizeFilter, MAX_SHARD_BITS, type BitLayout, type SizingOptions } from '@bloomkit/core'
import { earlierSizeFilter } from '@bloomkit/core/store'

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

  test('one block: every key shares it, so the rate is E[(set bits / 512)^k] after k·n uniform probes', () => {
    // By inclusion–exclusion over which of an absent key's k = 3 probes coincide: P(j given distinct
    // bits are all set after T probes) = Σ_i (−1)^i C(j, i) (1 − i/m)^T, weighted by how many
    // 3-tuples of positions have j distinct bits. The textbook fill^k is below it (Jensen).
    const m = 512
    const T = 3 * 20
    const allSet = (j: number) => [0, 1, 2, 3].slice(0, j + 1).reduce((sum, i) => sum + (-1) ** i * [1, j, (j * (j - 1)) / 2, 1][i] * Math.pow(1 - i / m, T), 0)
    const exact = (m * (m - 1) * (m - 2) * allSet(3) + 3 * m * (m - 1) * allSet(2) + m * allSet(1)) / m ** 3
    const rate = estimateErrorRate({ bits: 512, hashes: 3, items: 20, layout: 'blocked' })
    expect(rate / exact).toBeCloseTo(1, 12)
    expect(rate).toBeGreaterThan(Math.pow(1 - Math.pow(1 - 1 / m, T), 3))
  })

  test('refuses bits that are not whole blocks', () => {
    expect(() => estimateErrorRate({ bits: 1000, hashes: 3, items: 20, layout: 'blocked' })).toThrowError(invalidParameter('bits'))
  })
})

describe('sizeFilter', () => {
  test('classic, one shard: Guava’s hashes, and Guava’s bits grown in 0.1 % steps while the expected rate is above the rate asked', () => {
    // Guava's 9 585 058 bits give 1.0039 % (k rounded to 7); 0.1 % more bits give 0.9992 %.
    expect(sizeFilter({ capacity: 1_000_000, errorRate: 0.01, layout: 'classic' })).toEqual({ bits: 9594656, hashes: 7, shards: 1, seed: 0, layout: 'classic', scheme: 3 })
    // Where Guava's bits rounded up to whole bytes meet the rate, they are kept: 7 298 → 7 304 bits.
    const guava = optimalParameters({ capacity: 1000, errorRate: 0.03 })
    expect(estimateErrorRate({ ...guava, items: 1000 })).toBeGreaterThan(0.03)
    expect(estimateErrorRate({ bits: 7304, hashes: guava.hashes, items: 1000 })).toBeLessThanOrEqual(0.03)
    expect(sizeFilter({ capacity: 1000, errorRate: 0.03, layout: 'classic' }).bits).toBe(7304)
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
  ] as const)('n=%d p=%d over %d shard(s), %s: the smallest size whose expected error rate is no worse than Guava’s one shard nor the rate asked', (capacity, errorRate, shards, layout) => {
    const guava = optimalParameters({ capacity, errorRate })
    const target = Math.min(errorRate, estimateErrorRate({ ...guava, items: capacity }))
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

describe('sizeFilter meets the rate asked at every size', () => {
  // Every capacity from 1 to 40, then ×2.5 steps to 10^9; every decade of rate from 1e-1 to 1e-12;
  // both layouts; one shard and many. The expected rate (exact occupancy up to 4096 bits a shard or
  // block, second-order above) of what sizeFilter gives is at most the rate asked.
  const capacities = [...Array.from({ length: 40 }, (_, i) => i + 1)]
  for (let n = 100; n <= 1e9; n = Math.ceil(n * 2.5)) capacities.push(n)
  const rates = Array.from({ length: 12 }, (_, i) => Number(`1e-${i + 1}`))
  test.each([
    ['classic', undefined],
    ['classic', 7],
    ['blocked', undefined],
    ['blocked', 7],
  ] as Array<[BitLayout, number | undefined]>)('%s, shards %s: expected rate ≤ errorRate for every capacity and rate of the grid', (layout, shards) => {
    const over: string[] = []
    for (const errorRate of rates) {
      for (const capacity of capacities) {
        // A shard holds at most 2^32 bits: 10^9 keys at the tightest rates need more than 7 shards.
        const sized = sizeFilter({ capacity, errorRate, layout, shards: capacity <= 1e8 ? shards : undefined })
        const rate = estimateErrorRate({ ...sized, items: capacity })
        if (!(rate <= errorRate)) over.push(`${capacity} @ ${errorRate}: ${rate}`)
      }
    }
    expect(over).toEqual([])
    // ~13 s for classic over 7 shards on an idle machine (exact rates for every shard size tried).
  }, 180_000)

  test('the default layout too, and the rate it gives is within 1 % of the one asked where Guava’s sizes are large (no waste)', () => {
    for (const errorRate of rates) {
      for (const capacity of capacities.filter((n) => n >= 10_000)) {
        const sized = sizeFilter({ capacity, errorRate })
        const rate = estimateErrorRate({ ...sized, items: capacity })
        expect(rate).toBeLessThanOrEqual(errorRate)
        if (sized.layout === 'classic') expect(rate).toBeGreaterThan(errorRate * 0.97)
      }
    }
  })
})

describe('earlierSizeFilter', () => {
  // The sizes the release before honest sizing gave (its sizeFilter, run on these options).
  test.each([
    [{ capacity: 1_000_000, errorRate: 0.01 }, { bits: 9895424, hashes: 7, shards: 1, layout: 'blocked' }],
    [{ capacity: 1_000_000, errorRate: 0.01, layout: 'classic' }, { bits: 9585064, hashes: 7, shards: 1, layout: 'classic' }],
    [{ capacity: 1, errorRate: 0.001 }, { bits: 16, hashes: 10, shards: 1, layout: 'classic' }],
    [{ capacity: 1000, errorRate: 0.001, layout: 'classic', shards: 4 }, { bits: 14528, hashes: 10, shards: 4, layout: 'classic' }],
    [{ capacity: 1_000_000_000, errorRate: 0.01 }, { bits: 9895024128, hashes: 7, shards: 3, layout: 'blocked' }],
    [{ capacity: 100, errorRate: 1e-6, layout: 'blocked' }, { bits: 4096, hashes: 20, shards: 1, layout: 'blocked' }],
  ] as Array<[SizingOptions, object]>)('%o: %o, as before', (options, expected) => {
    expect(earlierSizeFilter(options)).toMatchObject(expected)
  })

  test('differs from sizeFilter where the earlier sizing missed the rate', () => {
    expect(sizeFilter({ capacity: 1_000_000, errorRate: 0.01 }).bits).toBeGreaterThan(earlierSizeFilter({ capacity: 1_000_000, errorRate: 0.01 }).bits)
  })
})
