import { describe, expect, test } from 'vitest'
import { estimateErrorRate, optimalParameters } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'

/** Probability that a bound is crossed by chance: the tests are deterministic, this is how wide they are. */
const EPSILON = 1e-9

/**
 * Multiplicative Chernoff bounds on a sum of independent Bernoulli trials with mean μ: it exceeds
 * (1 + δ)μ with probability at most e^(−δ²μ/(2+δ)), and falls below (1 − δ)μ with at most e^(−δ²μ/2).
 * Each δ is solved so that bound equals EPSILON.
 */
function chernoffInterval(mu: number): [number, number] {
  const l = Math.log(1 / EPSILON)
  const upper = (l + Math.sqrt(l * l + 8 * mu * l)) / (2 * mu)
  const lower = Math.min(1, Math.sqrt((2 * l) / mu))
  return [(1 - lower) * mu, (1 + upper) * mu]
}

/**
 * Fixed, disjoint corpora (members `m:<i>`, probes `p:<i>`) make each run identical; the bound
 * says how unlikely the observed count would be if the filter's true rate were the model's.
 */
describe.each([
  { capacity: 100_000, errorRate: 0.01, shards: 1, probes: 400_000, layout: 'blocked' },
  { capacity: 100_000, errorRate: 0.01, shards: 1, probes: 400_000, layout: 'classic' },
  { capacity: 100_000, errorRate: 0.001, shards: 1, probes: 2_000_000, layout: 'blocked' },
  { capacity: 20_000, errorRate: 1e-4, shards: 1, probes: 5_000_000, layout: 'classic' },
  { capacity: 20_000, errorRate: 1e-4, shards: 1, probes: 5_000_000, layout: 'blocked' },
  { capacity: 1_000_000, errorRate: 0.01, shards: 1024, probes: 400_000, layout: 'blocked' },
  { capacity: 1_000_000, errorRate: 0.01, shards: 1024, probes: 400_000, layout: 'classic' },
  { capacity: 200_000, errorRate: 0.001, shards: 64, probes: 2_000_000, layout: 'blocked' },
] as const)('false-positive rate, n=$capacity p=$errorRate over $shards shard(s), $layout', ({ capacity, errorRate, shards, probes, layout }) => {
  test('the measured rate is within the Chernoff bound of the model, and the model meets the target', async () => {
    const filter = await MemoryBloomFilter.create({ capacity, errorRate, shards, seed: 12345, layout })
    for (let i = 0; i < capacity; i++) filter.add(`m:${i}`)
    let positives = 0
    for (let i = 0; i < probes; i++) if (filter.has(`p:${i}`)) positives++

    const model = estimateErrorRate({ ...filter.parameters, items: capacity })
    const [low, high] = chernoffInterval(model * probes)
    console.log(
      `n=${capacity} p=${errorRate} shards=${shards} ${layout}: measured ${(positives / probes).toExponential(3)}, ` +
        `model ${model.toExponential(3)}, allowed [${(low / probes).toExponential(3)}, ${(high / probes).toExponential(3)}]`,
    )
    expect(positives).toBeGreaterThanOrEqual(low)
    expect(positives).toBeLessThanOrEqual(high)
    // The model at the sized parameters is no worse than Guava's one-shard sizing would give.
    const guava = estimateErrorRate({ ...optimalParameters({ capacity, errorRate }), items: capacity })
    expect(model).toBeLessThanOrEqual(guava)
    // …and Guava's sizing itself lands within 1 % of the target (it rounds k).
    expect(guava).toBeLessThan(errorRate * 1.01)
  }, 60_000)
})
