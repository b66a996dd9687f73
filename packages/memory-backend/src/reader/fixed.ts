import { crc32 } from './crc32.js'
import { corrupt, unsupported } from './errors.js'
import { imul } from './hash.js'

/** Whether a key hashed to `a`, `b` (signed 32-bit) has all its bits set. */
export type Probe = (a: number, b: number) => boolean

/** "BLMK" read little-endian. */
export const MAGIC = 0x4b4d4c42

const TWO_TO_32 = 4294967296
const floor = Math.floor

/** MurmurHash3's finaliser (docs/SPEC.md section 3), unsigned. */
function fmix32(h: number): number {
  h = imul(h ^ (h >>> 16), -2048144789) // 0x85EBCA6B
  h = imul(h ^ (h >>> 13), -1028477387) // 0xC2B2AE35
  return (h ^ (h >>> 16)) >>> 0
}

/** ⌊h · n / 2^32⌋ exactly, for h below 2^32 and n up to 2^32 (h split in 16-bit halves). */
function scale(h: number, n: number): number {
  return floor(((h >>> 16) * n + floor(((h & 0xffff) * n) / 65536)) / 65536)
}

/** Reads a little-endian u64 below 2^53. */
export function uint64(view: DataView, at: number): number {
  return view.getUint32(at, true) + view.getUint32(at + 4, true) * TWO_TO_32
}

/**
 * Checks a version-1 snapshot (docs/SPEC.md section 6) in the order core's `decodeSnapshot` does,
 * so that a damaged one fails with the code the full filter's import gives, and returns its seed
 * and a probe over its payload (a view of `bytes`, not a copy).
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` or `BLOOM_UNSUPPORTED_VERSION`.
 */
export function readFixed(bytes: Uint8Array): { seed: number; probe: Probe } {
  const length = bytes.length
  if (length < 40) throw corrupt('is truncated')
  const view = new DataView(bytes.buffer, bytes.byteOffset, length)
  const u32 = (at: number) => view.getUint32(at, true)
  if (u32(0) !== MAGIC) throw corrupt('is not a bloomkit snapshot')
  if (u32(36) !== crc32(bytes, 0, 36)) throw corrupt('fails its header CRC-32')
  const version = view.getUint16(4, true)
  if (version !== 1) {
    throw unsupported(`format version ${version}: ` + (version === 2 ? "a layered filter's: read it with openLayeredSnapshot" : version === 3 ? "a counting filter's: ship its exportPlain()" : 'unknown here'))
  }
  const scheme = bytes[6]
  if (scheme < 1 || scheme > 3) throw unsupported(`has hash scheme ${scheme}, unknown here`)
  if (u32(32) !== 0) throw corrupt('has unknown flags')
  const hashes = bytes[7]
  const shards = u32(12)
  const bits = u32(16) + u32(20) * TWO_TO_32
  const shardBits = bits / shards
  // checkParameters' ranges (docs/SPEC.md section 1); bits from 8 to 2^48 follow from these.
  if (!(hashes >= 1 && hashes <= 64 && shards >= 1 && shards <= 65536 && shardBits % (scheme === 2 ? 512 : 8) === 0 && shardBits >= hashes && shardBits <= TWO_TO_32)) {
    throw corrupt('has impossible parameters')
  }
  const end = 40 + bits / 8
  if (length !== end + 4) throw corrupt(`is ${length} bytes, not ${end + 4}`)
  if (u32(end) !== crc32(bytes, 40, end)) throw corrupt('fails its payload CRC-32')

  const shardBytes = shardBits / 8
  const blocks = shardBits / 512
  const probe: Probe = (a, b) => {
    // Section 3: the key's shard, as the byte where its bits start (the payload starts at byte 40).
    const base = 40 + (shards === 1 ? 0 : floor((fmix32(a ^ ((b << 16) | (b >>> 16))) * shards) / TWO_TO_32) * shardBytes)
    // Bit p of a shard is bit 7 − p mod 8 of its byte ⌊p / 8⌋ (section 5); p is below 2^32.
    let p: number
    if (scheme === 2) {
      // Section 4.2: one 512-bit block, probed by the top 9 bits of b · 0x9E3779B9^i.
      // No early exit: the probes share one cache line, and a branch per probe mispredicts on
      // about every other absent key (core's ArrayProbe measured the same).
      const start = scale(a >>> 0, blocks) * 512
      let missing = 0
      for (let i = 0; i < hashes; i++) {
        p = start + (b >>> 23)
        missing |= ~bytes[base + (p >>> 3)] & (128 >>> (p & 7))
        b = imul(b, -1640531527) // 0x9E3779B9
      }
      return missing === 0
    }
    // Sections 4.1 and 4.3: h_i = a + i·b + (i³ − i)/6, remixed by fmix32 in scheme 3.
    for (let i = 0; i < hashes; i++) {
      p = scale(scheme === 3 ? fmix32(a) : a >>> 0, shardBits)
      if ((bytes[base + (p >>> 3)] & (128 >>> (p & 7))) === 0) return false
      a = (a + b) | 0
      b = (b + i + 1) | 0
    }
    return true
  }
  return { seed: u32(8), probe }
}
