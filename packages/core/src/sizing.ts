import { checkInteger, invalidParameter } from './errors.js'
import { checkOptionNames } from './option-names.js'
import { checkErrorRate } from './option-values.js'
import { checkLayout, HASH_SCHEMES, MAX_HASHES, MAX_SHARD_BITS, MAX_SHARDS, type BitLayout, type FilterParameters } from './parameters.js'
import type { SizingOptions } from './options.js'
import { BLOCK_BITS } from './bits/positions.js'

/** What a filter should hold: how many distinct keys, at what false-positive rate. */
export interface CapacityOptions {
  /** The number of distinct keys the filter is sized for; a positive safe integer. */
  readonly capacity: number
  /** The target false-positive probability at `capacity` keys, in (0, 1). */
  readonly errorRate: number
}

/** A filter's size: total bits and the number of bit positions per key. */
export interface Dimensions {
  /** Total bits (m). */
  readonly bits: number
  /** Bit positions per key (k). */
  readonly hashes: number
}

/** The most bits a filter may have: 65 536 shards of 2^32 bits. */
const MAX_BITS = MAX_SHARDS * MAX_SHARD_BITS

/** The smallest error rate that needs at most {@link MAX_HASHES} hashes: 2^−64.5 (Guava's k = round(−log2 p)). */
const MIN_ERROR_RATE = Math.pow(2, -(MAX_HASHES + 0.5))

export { checkErrorRate } from './option-values.js'

/**
 * The bits and hashes that hold `capacity` keys at `errorRate`, by the formulas Guava and Redisson
 * use, so the sizes match theirs: bits = ⌊−n·ln p / (ln 2)²⌋, hashes = max(1, round(bits / n · ln 2)).
 *
 * @throws BloomError `BLOOM_INVALID_PARAMETER` for a capacity that is not a positive safe integer,
 *   an error rate outside (0, 1), or sizes no filter can have: more than 64 hashes (an error rate
 *   below about 3.9e-20) or more than 2^48 bits.
 */
export function optimalParameters(options: CapacityOptions): Dimensions {
  checkOptionNames('optimalParameters', options, [], CAPACITY_OPTIONS)
  return guavaDimensions(options)
}

/** The names of {@link CapacityOptions} (a Record, so that a new one must be listed). */
const CAPACITY_OPTIONS = Object.keys({ capacity: true, errorRate: true } satisfies Record<keyof CapacityOptions, true>)

/** {@link optimalParameters} of options whose names were checked by the caller (`sizeFilter`'s). */
function guavaDimensions(options: CapacityOptions): Dimensions {
  const capacity = checkInteger('capacity', options.capacity, 1, Number.MAX_SAFE_INTEGER)
  const errorRate = checkErrorRate('errorRate', options.errorRate)
  const bits = guavaBits(capacity, errorRate)
  const hashes = guavaHashes(capacity, errorRate)
  // No filter of the format holds more than 64 hashes or 2^48 bits (docs/SPEC.md): refuse here
  // rather than answer with sizes that every create would refuse.
  if (hashes > MAX_HASHES) throw invalidParameter('errorRate', `at least about ${MIN_ERROR_RATE.toPrecision(2)} (at most ${MAX_HASHES} hashes)`, errorRate)
  if (bits > MAX_BITS) {
    throw invalidParameter('capacity', `at most about ${Math.floor(MAX_BITS / (bits / capacity))} at errorRate ${errorRate} (at most 2^48 bits)`, capacity)
  }
  return { bits: Math.max(1, bits), hashes }
}

/** Guava's bit count for `capacity` keys at `errorRate`, unchecked: ⌊−n·ln p / (ln 2)²⌋. */
function guavaBits(capacity: number, errorRate: number): number {
  return Math.floor((-capacity * Math.log(errorRate)) / (Math.LN2 * Math.LN2))
}

/**
 * Guava's hash count, unchecked and unbounded: max(1, round(bits / n · ln 2)). Above
 * {@link MAX_HASHES} for error rates below about 3.8e-20, which {@link optimalParameters} refuses
 * and layered filters size another way.
 */
export function guavaHashes(capacity: number, errorRate: number): number {
  return Math.max(1, Math.round((guavaBits(capacity, errorRate) / capacity) * Math.LN2))
}

/**
 * The most keys that `bits` can hold at `errorRate`: the largest capacity for which
 * {@link optimalParameters} asks for at most `bits` bits (its inverse).
 */
export function optimalCapacity(options: { readonly bits: number; readonly errorRate: number }): number {
  checkOptionNames('optimalCapacity', options, [], ['bits', 'errorRate'])
  const bits = checkInteger('bits', options.bits, 1, MAX_BITS)
  const errorRate = checkErrorRate('errorRate', options.errorRate)
  const bitsPerKey = -Math.log(errorRate) / (Math.LN2 * Math.LN2)
  const bitsFor = (capacity: number) => Math.floor(capacity * bitsPerKey)
  let capacity = Math.floor(bits / bitsPerKey)
  while (bitsFor(capacity + 1) <= bits) capacity++
  while (capacity > 0 && bitsFor(capacity) > bits) capacity--
  return capacity
}

/** Inputs of {@link estimateErrorRate}. */
export interface ErrorRateOptions extends Dimensions {
  /** The number of distinct keys in the filter. */
  readonly items: number
  /** Shards the bits are split into (each key lives in one, chosen by its hash). Default: 1. */
  readonly shards?: number
  /**
   * `'classic'` (the default, as Guava's filter) or `'blocked'`: all of a key's bits in one
   * 512-bit block; `bits` must then be a multiple of 512.
   */
  readonly layout?: BitLayout
}

/**
 * The expected false-positive rate of a filter holding `items` keys.
 *
 * Counts what the textbook (1 − (1 − 1/m)^(kn))^k leaves out: the set bits of a small shard or
 * block vary from filter to filter, and the rate, their k-th power, is convex in them (see
 * {@link probeRate}); and it averages over the binomial spread of keys across shards (classic) or
 * blocks (blocked): a shard or block that draws more keys than average costs more than a lighter
 * one saves. Assumes positions that behave as independent draws, as hash schemes 2 and 3 give.
 */
export function estimateErrorRate(options: ErrorRateOptions): number {
  // A filter's parameters spread in whole (`{ ...filter.parameters, items }`) are welcome: seed and scheme are taken and not used.
  checkOptionNames('estimateErrorRate', options, [], ERROR_RATE_OPTIONS)
  const bits = checkInteger('bits', options.bits, 1, MAX_BITS)
  const hashes = checkInteger('hashes', options.hashes, 1, MAX_HASHES)
  const items = checkInteger('items', options.items, 0, Number.MAX_SAFE_INTEGER)
  const shards = options.shards === undefined ? 1 : checkInteger('shards', options.shards, 1, bits)
  const layout = options.layout === undefined ? 'classic' : options.layout
  if (layout === 'blocked' && bits % BLOCK_BITS !== 0) throw invalidParameter('bits', `a multiple of ${BLOCK_BITS} for the blocked layout`, bits)
  if (layout !== 'blocked' && layout !== 'classic') throw invalidParameter('layout', "'blocked' or 'classic'", layout)
  return expectedRate(bits, hashes, items, shards, layout, probeRate)
}

/** The names {@link estimateErrorRate} takes: its own and the rest of a filter's parameters. */
const ERROR_RATE_OPTIONS = [
  ...Object.keys({ bits: true, hashes: true, items: true, shards: true, layout: true } satisfies Record<keyof ErrorRateOptions, true>),
  ...Object.keys({ seed: true, scheme: true } satisfies Record<Exclude<keyof FilterParameters, keyof ErrorRateOptions>, true>),
]

/**
 * {@link estimateErrorRate} of a blocked filter, unchecked: for a filter's own valid parameters and
 * count (its `errorRate()`), so that a bundle of a filter carries no copy of the checks.
 */
export function blockedErrorRate(bits: number, hashes: number, items: number): number {
  return expectedRate(bits, hashes, items, 1, 'blocked', probeRate)
}

/** The rate of one shard or block of `bits` bits holding `keys` keys of `hashes` probes each. */
type OccupancyRate = (bits: number, hashes: number, keys: number) => number

/** {@link estimateErrorRate} on checked arguments, with `rateIn` as the rate of one shard or block. */
function expectedRate(bits: number, hashes: number, items: number, shards: number, layout: BitLayout, rateIn: OccupancyRate): number {
  if (items === 0) return 0
  // A key's block is uniform over all blocks of all shards, so shards do not matter for blocked.
  if (layout === 'blocked') return expectOverBinomial(items, BLOCK_BITS / bits, (load) => rateIn(BLOCK_BITS, hashes, load))
  const rateAt = (load: number) => rateIn(bits / shards, hashes, load)
  return shards === 1 ? rateAt(items) : expectOverBinomial(items, 1 / shards, rateAt)
}

/**
 * The textbook rate (1 − (1 − 1/m)^(k·n))^k: the fill's expected value to the power k. Below the
 * true rate on small shards and in blocks ({@link probeRate}); earlier releases sized with it, and
 * {@link earlierSizeFilter} still does, so that `create` recognises their filters.
 */
function textbookRate(bits: number, hashes: number, keys: number): number {
  return Math.pow(-Math.expm1(hashes * keys * Math.log1p(-1 / bits)), hashes)
}

/**
 * E[f(X)] for X ~ Binomial(n, p). Sums the terms around the mode until they vanish (weights are
 * built from the ratio of neighbours, so no factorials overflow); past a few thousand standard
 * deviations' worth of terms it samples the normal approximation instead, which is exact enough there.
 */
function expectOverBinomial(n: number, p: number, f: (x: number) => number): number {
  if (p >= 1) return f(n)
  const mean = n * p
  const sd = Math.sqrt(mean * (1 - p))
  if (sd > 2000) {
    let total = 0
    let weights = 0
    for (let z = -10; z <= 10; z += 0.01) {
      const w = Math.exp((-z * z) / 2)
      total += w * f(Math.max(0, Math.min(n, mean + z * sd)))
      weights += w
    }
    return total / weights
  }
  const mode = Math.floor((n + 1) * p)
  const odds = p / (1 - p)
  let total = f(mode)
  let weights = 1
  let w = 1
  for (let x = mode; x < n; x++) {
    w *= ((n - x) / (x + 1)) * odds
    if (w < 1e-17) break
    total += w * f(x + 1)
    weights += w
  }
  w = 1
  for (let x = mode; x > 0; x--) {
    w *= (x / (n - x + 1)) / odds
    if (w < 1e-17) break
    total += w * f(x - 1)
    weights += w
  }
  return total / weights
}

/** Bit counts up to which {@link probeRate} computes the distribution of set bits exactly. */
const EXACT_MAX_BITS = 4096

/** Exact rates per (bits, hashes): rates[n] for n keys, and the set-bit distribution after the last (zero outside [low, high]). */
const exactTables = new Map<string, { rates: number[]; dist: Float64Array; low: number; high: number }>()

/** Tables kept at most (32 KiB each at most): a sizing search reuses a few; a process that sizes many filters does not grow. */
const EXACT_TABLES_KEPT = 64

/**
 * P(an absent key reads present) in `bits` bits holding `keys` keys of `hashes` independent uniform
 * probes each: E[(X / m)^k], X the set bits after k·n probes. The textbook (E[X] / m)^k is below it
 * (Jensen), by a factor of about 1 + k(k − 1)/2 · Var(X)/E[X]², which matters on small shards and
 * in 512-bit blocks: 48 bits, k = 30, one key: 1.3e-9 where the textbook says 1.3e-10.
 * Up to {@link EXACT_MAX_BITS} bits the distribution of X is computed exactly (one probe at a time,
 * kept per size so a sizing search reuses it); above, the second-order correction is used, which is
 * within a small fraction of a per cent there.
 */
export function probeRate(bits: number, hashes: number, keys: number): number {
  if (keys <= 0) return 0
  // Exact where it matters and is cheap: beyond 16 probes a bit the filter is saturated anyway.
  if (bits <= EXACT_MAX_BITS && Number.isInteger(keys) && hashes * keys <= 16 * bits) return exactProbeRate(bits, hashes, keys)
  const throws = hashes * keys
  const empty = Math.exp(throws * Math.log1p(-1 / bits)) // P(a given bit is unset)
  const q = -Math.expm1(throws * Math.log1p(-1 / bits)) // E[X] / m
  // Var(X) = m·p1(1 − p1) + m(m − 1)(p2 − p1²), with p2 − p1² written so that it does not cancel.
  const both = empty * empty * Math.expm1(throws * (Math.log1p(-2 / bits) - 2 * Math.log1p(-1 / bits)))
  const variance = Math.max(0, bits * empty * (1 - empty) + bits * (bits - 1) * both)
  const relative = variance / (bits * q) ** 2
  return Math.pow(q, hashes) * (1 + ((hashes * (hashes - 1)) / 2) * relative)
}

function exactProbeRate(bits: number, hashes: number, keys: number): number {
  const id = `${bits}:${hashes}`
  let table = exactTables.get(id)
  if (table === undefined) {
    if (exactTables.size >= EXACT_TABLES_KEPT) exactTables.clear()
    const dist = new Float64Array(bits + 1)
    dist[0] = 1
    table = { rates: [0], dist, low: 0, high: 0 }
    exactTables.set(id, table)
  }
  const { rates, dist } = table
  let { low, high } = table
  while (rates.length <= keys) {
    // k more probes: X grows by one with probability (m − X) / m. X stays within a few standard
    // deviations of its mean, so only [low, high] is carried; what falls below 1e-40 is dropped.
    for (let probe = 0; probe < hashes; probe++) {
      if (high < bits) high++
      for (let x = high; x > low; x--) dist[x] = dist[x] * (x / bits) + dist[x - 1] * ((bits - x + 1) / bits)
      dist[low] *= low / bits
      while (low < high && dist[low] < 1e-40) dist[low++] = 0
      while (high > low && dist[high] < 1e-40) dist[high--] = 0
    }
    let rate = 0
    for (let x = low; x <= high; x++) rate += dist[x] * Math.pow(x / bits, hashes)
    rates.push(rate)
  }
  table.low = low
  table.high = high
  return rates[keys]
}

/**
 * Turns capacity and error rate into full parameters. The hashes are Guava's; so are the bits of a
 * one-shard classic filter (rounded up to whole bytes). Otherwise the bits grow until the expected
 * error rate is no worse than that classic filter's: a classic filter over several shards pays for
 * keys spreading unevenly over them, a blocked one for keys spreading unevenly over its blocks.
 *
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the option and its allowed range.
 */
export function sizeFilter(options: SizingOptions): FilterParameters {
  checkOptionNames('sizeFilter', options, ['sizing'])
  return sizeWith(options, HONEST_SIZING)
}

/**
 * The parameters earlier releases' `sizeFilter` gave the same options: the textbook rate
 * ({@link textbookRate}) as the model, Guava's rate as the only target, a one-shard classic filter
 * at Guava's bits. A backend's `create` adopts a stored filter of these sizes, so that a service
 * calling `create` at every boot keeps opening the filter an earlier release made.
 * @throws as {@link sizeFilter}.
 */
export function earlierSizeFilter(options: SizingOptions): FilterParameters {
  checkOptionNames('earlierSizeFilter', options, ['sizing'])
  return sizeWith(options, EARLIER_SIZING)
}

/** How {@link sizeWith} sizes: this release's way, or earlier releases'. */
interface Sizing {
  /** The rate of one shard or block. */
  readonly rateIn: OccupancyRate
  /** Caps the target at the rate asked for and sizes one-shard classic filters by it too (false: as earlier releases). */
  readonly honest: boolean
}

const HONEST_SIZING: Sizing = { rateIn: probeRate, honest: true }
const EARLIER_SIZING: Sizing = { rateIn: textbookRate, honest: false }

/** {@link sizeFilter} as `sizing` says. */
function sizeWith(options: SizingOptions, { rateIn, honest }: Sizing): FilterParameters {
  if (options === null || typeof options !== 'object') throw invalidParameter('options', 'an object', options)
  const { bits, hashes } = guavaDimensions(options)
  const seed = options.seed === undefined ? 0 : checkInteger('seed', options.seed, 0, 0xffffffff)
  const requestedShards = options.shards === undefined ? undefined : checkInteger('shards', options.shards, 1, MAX_SHARDS)
  const items = options.capacity
  const rate = (size: number, shards: number, layout: BitLayout) => expectedRate(size, hashes, items, shards, layout, rateIn)
  const guava = rate(bits, 1, 'classic')
  const target = honest ? Math.min(guava, options.errorRate) : guava
  const blocked = options.layout === 'classic' ? 0 : blockedBits(bits, target, rate)
  const layout = options.layout === undefined ? (blocked <= bits * (1 + BLOCKED_MAX_OVERHEAD) ? 'blocked' : 'classic') : checkLayout(options.layout)
  const sized = layout === 'blocked' ? blocked : bits
  let shards = requestedShards ?? Math.ceil(sized / MAX_SHARD_BITS)
  for (;;) {
    if (shards > MAX_SHARDS) {
      const most = Math.floor((items * MAX_SHARDS * MAX_SHARD_BITS) / sized)
      throw invalidParameter('capacity', `at most about ${most} at errorRate ${options.errorRate} (${MAX_SHARDS} shards of 2^32 bits)`, items)
    }
    const shardBits =
      layout === 'blocked'
        ? roundUp(Math.ceil(sized / shards), BLOCK_BITS)
        : classicShardBits({ bits, hashes, shards, target, rate, grow: honest || shards > 1 })
    if (shardBits <= MAX_SHARD_BITS) return { bits: shardBits * shards, hashes, shards, seed, layout, scheme: HASH_SCHEMES[layout] }
    if (requestedShards !== undefined) {
      throw invalidParameter('shards', `enough to keep each shard at most 2^32 bits (at least ${shards + 1} here)`, shards)
    }
    shards++
  }
}

/**
 * The most extra bits, as a fraction of the classic filter's, that the default sizing accepts for
 * the blocked layout: 3 % at a 1 % error rate and 8 % at 0.1 %, but 15 % at 0.01 % and 34 % at 1e-6.
 */
export const BLOCKED_MAX_OVERHEAD = 0.1

function roundUp(bits: number, multiple: number): number {
  return Math.ceil(bits / multiple) * multiple
}

/**
 * Bits per shard of a classic filter over `shards`: Guava's bits split and rounded up to bytes, then
 * (when `grow`) grown until the expected error rate meets `target`.
 */
function classicShardBits({ bits, hashes, shards, target, rate, grow }: {
  readonly bits: number
  readonly hashes: number
  readonly shards: number
  readonly target: number
  readonly rate: (size: number, shards: number, layout: BitLayout) => number
  readonly grow: boolean
}): number {
  let shardBits = Math.max(roundUp(Math.ceil(bits / shards), 8), roundUp(hashes, 8))
  if (!grow) return shardBits
  // Grow by 0.1 % steps (a byte at least): the first size on target is within 0.1 % of the smallest one.
  while (rate(shardBits * shards, shards, 'classic') > target) shardBits = roundUp(shardBits * 1.001, 8)
  return shardBits
}

/**
 * The fewest bits, in whole blocks, at which a blocked filter meets `target`. How keys spread over
 * blocks does not depend on the shard count, so neither does this.
 */
function blockedBits(bits: number, target: number, rate: (size: number, shards: number, layout: BitLayout) => number): number {
  const at = (blocks: number) => rate(blocks * BLOCK_BITS, 1, 'blocked')
  let low = Math.max(1, Math.floor(bits / BLOCK_BITS))
  let high = low
  while (at(high) > target) high *= 2
  // Binary search over whole blocks: the rate falls as blocks grow.
  while (low < high) {
    const middle = Math.floor((low + high) / 2)
    if (at(middle) > target) low = middle + 1
    else high = middle
  }
  return high * BLOCK_BITS
}
