/**
 * Where a key's bits go, from its two 32-bit hashes (docs/SPEC.md, "Positions").
 * Plain doubles suffice: every intermediate stays below 2^53, so the result is exact for any
 * shard size up to 2^32 bits and any filter size, with no BigInt.
 */

/** Bits per block of the blocked layout: a 64-byte cache line. */
export const BLOCK_BITS = 512

/** The multiplier that steps a blocked key's probe hash (2^32 / golden ratio, as in RocksDB's cache-local filter). */
export const PROBE_STEP = 0x9e3779b9 | 0

/**
 * MurmurHash3's 32-bit finaliser, a bijection on 32 bits: decorrelates the shard choice from the
 * in-shard positions, and (scheme 3) each probe from the next.
 */
export function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** The shard, in [0, shards), that holds the key hashed to `a`, `b`: ⌊fmix32(a ⊕ rotl(b, 16)) · shards / 2^32⌋. */
export function shardOf(a: number, b: number, shards: number): number {
  if (shards === 1) return 0
  return Math.floor((fmix32(a ^ ((b << 16) | (b >>> 16))) * shards) / 4294967296)
}

/**
 * ⌊h · shardBits / 2^32⌋ for an unsigned 32-bit `h`: maps a hash onto [0, shardBits) with a
 * multiply-shift instead of a modulo (no branch, no slow floating-point %). Exact: h is split into
 * 16-bit halves so that every product stays below 2^49.
 */
export function scaleToShard(h: number, shardBits: number): number {
  // Up to 2^21 the plain product stays below 2^53, so it is exact as it is.
  if (shardBits <= 0x200000) return Math.floor((h * shardBits) / 4294967296)
  return Math.floor(((h >>> 16) * shardBits + Math.floor(((h & 0xffff) * shardBits) / 65536)) / 65536)
}

/**
 * The classic layout's first hash scheme (1), kept for the filters that use it.
 * Writes the key's `hashes` positions within its shard to `out[offset …]`: enhanced double hashing
 * in 32-bit arithmetic, h_i = (a + i·b + (i³ − i)/6) mod 2^32, then position_i = {@link scaleToShard}(h_i).
 * On a shard of a few thousand bits or less, keys whose b is small against 2^32 / shardBits get k
 * positions on a few distinct bits (the top bits of h_i hardly move), and the error rate exceeds
 * the one asked for; scheme 3 ({@link fillRemixedPositions}) does not.
 */
export function fillPositions(
  a: number,
  b: number,
  shardBits: number,
  hashes: number,
  out: Uint32Array,
  offset: number,
): void {
  fillClassic(a, b, shardBits, hashes, out, offset, PLAIN)
}

/**
 * The classic layout of new filters (hash scheme 3): scheme 1's sequence h_i, each remixed by
 * {@link fmix32} before {@link scaleToShard}. fmix32 is a bijection, so on a large shard positions
 * are as distinct as scheme 1's; on a small one the top bits of fmix32(h_i) move with every bit of
 * h_i, so the k positions behave as independent draws at every shard size (1 … 2^32 bits), as the
 * error-rate formula assumes. Two multiplies more per probe, no allocation.
 */
export function fillRemixedPositions(
  a: number,
  b: number,
  shardBits: number,
  hashes: number,
  out: Uint32Array,
  offset: number,
): void {
  fillClassic(a, b, shardBits, hashes, out, offset, REMIXED)
}

/** Scheme 1's positions: h_i as it is. */
const PLAIN = 0
/** Scheme 3's positions: h_i remixed by {@link fmix32}. */
const REMIXED = 1

/** Schemes 1 and 3 in one loop: `mixing` is fixed per call, so its branch is always predicted. */
function fillClassic(a: number, b: number, shardBits: number, hashes: number, out: Uint32Array, offset: number, mixing: typeof PLAIN | typeof REMIXED): void {
  const remix = mixing === REMIXED
  let x = a | 0
  let y = b | 0
  for (let i = 0; i < hashes; i++) {
    out[offset + i] = scaleToShard(remix ? fmix32(x) : x >>> 0, shardBits)
    x = (x + y) | 0
    y = (y + i + 1) | 0
  }
}

/**
 * The key's block in the blocked layout (hash scheme 2): ⌊a · blocks / 2^32⌋, where `blocks` is the
 * shard's `shardBits / 512`. Callers on a hot path pass `blocks` computed once, so that no key pays
 * for the division.
 */
export function blockIndex(a: number, blocks: number): number {
  return scaleToShard(a >>> 0, blocks)
}

/** The first bit of the key's block in the blocked layout: {@link blockIndex} times 512. */
export function blockStart(a: number, shardBits: number): number {
  return blockIndex(a, shardBits / BLOCK_BITS) * BLOCK_BITS
}

/**
 * The blocked layout (hash scheme 2). Writes the key's positions to `out[offset …]`: all in the
 * block at {@link blockStart}, bit i at the top 9 bits of h_i, where h_0 = b and
 * h_(i+1) = h_i · 0x9E3779B9 mod 2^32. One multiply per position, and one cache line per key.
 */
export function fillBlockedPositions(
  a: number,
  b: number,
  shardBits: number,
  hashes: number,
  out: Uint32Array,
  offset: number,
): void {
  const start = blockStart(a, shardBits)
  const step = PROBE_STEP // read once: an exported binding is a cell V8 reloads and unboxes on every use
  let h = b | 0
  for (let i = 0; i < hashes; i++) {
    out[offset + i] = start + (h >>> 23)
    h = Math.imul(h, step)
  }
}

/** The position-filling function of a hash scheme (see `HashScheme` in parameters.ts). */
export function positionsOf(scheme: 1 | 2 | 3): typeof fillPositions {
  return scheme === 2 ? fillBlockedPositions : scheme === 3 ? fillRemixedPositions : fillPositions
}
