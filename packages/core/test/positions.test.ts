import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { describe, expect, test } from 'vitest'
import { fillBlockedPositions, fillPositions, fillRemixedPositions, fmix32, scaleToShard, shardOf } from '@bloomkit/core/spec'
import { MAX_SHARD_BITS } from '@bloomkit/core'

const u32 = fc.integer({ min: 0, max: 0xffffffff })
const shardBits = fc.oneof(
  fc.integer({ min: 1, max: 8 }).map((n) => n * 8),
  fc.integer({ min: 1, max: MAX_SHARD_BITS / 8 }).map((n) => n * 8),
  fc.constantFrom(MAX_SHARD_BITS, MAX_SHARD_BITS - 8, 3 * 2 ** 30, 2 ** 31 + 8),
)

const blockedShardBits = fc.oneof(
  fc.integer({ min: 1, max: 16 }).map((n) => n * 512),
  fc.integer({ min: 1, max: MAX_SHARD_BITS / 512 }).map((n) => n * 512),
  fc.constant(MAX_SHARD_BITS),
)

/** docs/SPEC.md's definition, in BigInt: h_i = a + i·b + (i³ − i)/6 mod 2^32, position = (h_i · m) >> 32. */
function specPositions(a: number, b: number, m: number, k: number): number[] {
  const out: number[] = []
  for (let i = 0n; i < BigInt(k); i++) {
    const h = (BigInt(a) + i * BigInt(b) + (i * i * i - i) / 6n) % 2n ** 32n
    out.push(Number((h * BigInt(m)) >> 32n))
  }
  return out
}

/** docs/SPEC.md's scheme 3 (section 4.3), in BigInt: scheme 1's h_i, then position = (fmix32(h_i) · m) >> 32. */
function specRemixedPositions(a: number, b: number, m: number, k: number): number[] {
  const M = 2n ** 32n
  const out: number[] = []
  for (let i = 0n; i < BigInt(k); i++) {
    let h = (BigInt(a) + i * BigInt(b) + (i * i * i - i) / 6n) % M
    h ^= h >> 16n
    h = (h * 0x85ebca6bn) % M
    h ^= h >> 13n
    h = (h * 0xc2b2ae35n) % M
    h ^= h >> 16n
    out.push(Number((h * BigInt(m)) >> 32n))
  }
  return out
}

/** Distinct positions of (a, b) from a fixed-seed xorshift, `keys` times. */
function distinctCounts(fill: typeof fillPositions, m: number, k: number, keys: number): number[] {
  const out = new Uint32Array(k)
  const counts: number[] = []
  let x = 0x12345678
  const next = () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return x >>> 0
  }
  for (let i = 0; i < keys; i++) {
    fill(next(), next(), m, k, out, 0)
    counts.push(new Set(out).size)
  }
  return counts
}

function specShard(a: number, b: number, shards: number): number {
  let h = BigInt(a ^ (((b << 16) | (b >>> 16)) >>> 0)) & 0xffffffffn
  const mul = (x: bigint, c: bigint) => (x * c) & 0xffffffffn
  h = mul(h ^ (h >> 16n), 0x85ebca6bn)
  h = mul(h ^ (h >> 13n), 0xc2b2ae35n)
  h ^= h >> 16n
  return Number((h * BigInt(shards)) >> 32n)
}

describe('positions', () => {
  prop([u32, shardBits], { numRuns: 5000 })('scaleToShard is exactly ⌊h·m / 2^32⌋, for shards up to 2^32 bits', (h, m) => {
    const exact = Number((BigInt(h) * BigInt(m)) >> 32n)
    expect(scaleToShard(h, m)).toBe(exact)
    expect(exact).toBeLessThan(m)
  })

  prop([u32, u32, shardBits, fc.integer({ min: 1, max: 64 })], { numRuns: 3000 })(
    'fillPositions follows the enhanced double hashing formula of the spec',
    (a, b, m, k) => {
      const out = new Uint32Array(k + 2)
      fillPositions(a, b, m, k, out, 1)
      expect(Array.from(out.subarray(1, k + 1))).toEqual(specPositions(a, b, m, k))
      expect(out[0]).toBe(0)
      expect(out[k + 1]).toBe(0)
    },
  )

  prop([u32, u32, shardBits, fc.integer({ min: 1, max: 64 })], { numRuns: 3000 })(
    'fillRemixedPositions (scheme 3) follows the spec: scheme 1’s sequence through fmix32, then scaled',
    (a, b, m, k) => {
      const out = new Uint32Array(k + 2)
      fillRemixedPositions(a, b, m, k, out, 1)
      expect(Array.from(out.subarray(1, k + 1))).toEqual(specRemixedPositions(a, b, m, k))
      expect(out[0]).toBe(0)
      expect(out[k + 1]).toBe(0)
    },
  )

  test('fmix32 is MurmurHash3’s finaliser (its published values)', () => {
    // fmix32(0) = 0; the rest checked against the BigInt reading of section 3 above.
    expect(fmix32(0)).toBe(0)
    expect(specRemixedPositions(1, 0, 2 ** 32, 1)).toEqual([fmix32(1)])
    expect(specRemixedPositions(0xdeadbeef, 0, 2 ** 32, 1)).toEqual([fmix32(0xdeadbeef)])
  })

  test('on a 48-bit shard with k = 30, scheme 3 gives every key as many distinct positions as independent draws do; scheme 1 collapses', () => {
    // 30 independent draws over 48 bits: mean 22.3 distinct, standard deviation about 1.9, so
    // 12 or fewer has probability below 1e-7 per key (about 0.01 expected among 20 000 keys).
    const collapsed = (counts: number[]) => counts.filter((d) => d <= 12).length
    expect(collapsed(distinctCounts(fillRemixedPositions, 48, 30, 20_000))).toBe(0)
    // Scheme 1's known fault (docs/SPEC.md 4.1), so this test can tell the two apart.
    expect(collapsed(distinctCounts(fillPositions, 48, 30, 20_000))).toBeGreaterThan(400)
    const mean = (counts: number[]) => counts.reduce((sum, d) => sum + d, 0) / counts.length
    const expected = 48 * (1 - Math.pow(47 / 48, 30))
    expect(Math.abs(mean(distinctCounts(fillRemixedPositions, 48, 30, 20_000)) - expected)).toBeLessThan(0.1)
  })

  prop([u32, u32, blockedShardBits, fc.integer({ min: 1, max: 64 })], { numRuns: 3000 })(
    'fillBlockedPositions follows the spec: one 512-bit block, probes stepped by 0x9E3779B9',
    (a, b, m, k) => {
      const out = new Uint32Array(k + 2)
      fillBlockedPositions(a, b, m, k, out, 1)
      const start = Number(((BigInt(a) * BigInt(m / 512)) >> 32n) * 512n)
      const expected: number[] = []
      for (let i = 0, h = BigInt(b); i < k; i++, h = (h * 0x9e3779b9n) % 2n ** 32n) expected.push(start + Number(h >> 23n))
      expect(Array.from(out.subarray(1, k + 1))).toEqual(expected)
      for (const p of expected) expect(p - start).toBeLessThan(512)
      expect(start + 512).toBeLessThanOrEqual(m)
      expect(out[0]).toBe(0)
      expect(out[k + 1]).toBe(0)
    },
  )

  prop([u32, u32, fc.integer({ min: 1, max: 65_536 })], { numRuns: 3000 })('shardOf follows the spec and stays in range', (a, b, shards) => {
    const shard = shardOf(a, b, shards)
    expect(shard).toBe(shards === 1 ? 0 : specShard(a, b, shards))
    expect(shard).toBeLessThan(shards)
  })

  test('positions near the top of a 2^32-bit shard are exact (a filter above 2^32 bits)', () => {
    const out = new Uint32Array(4)
    fillPositions(0xffffffff, 0, MAX_SHARD_BITS, 4, out, 0)
    // h_i = 2^32 − 1 + (i³ − i)/6 mod 2^32: 2^32−1, 2^32−1, 0, 3.
    expect(Array.from(out)).toEqual([MAX_SHARD_BITS - 1, MAX_SHARD_BITS - 1, 0, 3])
  })

  test('shards are used evenly', () => {
    const counts = new Array(16).fill(0)
    let x = 1
    for (let i = 0; i < 160_000; i++) {
      x = Math.imul(x, 1664525) + 1013904223
      counts[shardOf(x >>> 0, Math.imul(x, 0x9e3779b1) >>> 0, 16)]++
    }
    // Each count is Binomial(160 000, 1/16): mean 10 000, sd ≈ 97; 6 sd either side.
    for (const count of counts) expect(Math.abs(count - 10_000)).toBeLessThan(600)
  })
})
