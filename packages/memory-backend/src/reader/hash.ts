import { BloomError, type BloomKey } from '@bloomkit/core'

// The reader's own XXH32 (docs/SPEC.md section 2): written for size rather than speed per byte,
// one lane a call over a byte buffer, where core's passes are unrolled two-lane copies per input
// kind plus a WebAssembly twin (~4 KB minified, more than the reader's whole budget). Only `has` runs
// on it, and keys are short: the memory suite's "reader has" row holds it to the full filter's speed.

/** `Math.imul`, read once: a global read per call is slow in edge-runtime's sandbox. */
export const imul = Math.imul
const PRIME1 = -1640531535 // 0x9E3779B1
const PRIME2 = -2048144777 // 0x85EBCA77
const PRIME3 = -1028477379 // 0xC2B2AE3D
const PRIME4 = 668265263 // 0x27D4EB2F
const PRIME5 = 374761393 // 0x165667B1

/** Lane b's seed is lane a's XOR this (docs/SPEC.md section 2). */
const LANE_B_SEED_XOR = -1640531527 // 0x9E3779B9

/** A key's bytes: the caller's Uint8Array, or `scratch` holding a string's UTF-8. */
let bytes: Uint8Array = new Uint8Array(256)
let scratch = bytes
const encoder = new TextEncoder()

/** XXH32's round: lane `lane` takes the little-endian word at byte `i` of {@link bytes}. */
function round(lane: number, i: number): number {
  lane = (lane + imul(bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24), PRIME2)) | 0
  return imul((lane << 13) | (lane >>> 19), PRIME1)
}

/** XXH32's 16-byte stripes of {@link bytes}`[0, length)` with `seed`, merged (length at least 16). */
function stripes(length: number, seed: number): number {
  let v1 = (seed + PRIME1 + PRIME2) | 0
  let v2 = (seed + PRIME2) | 0
  let v3 = seed | 0
  let v4 = (seed - PRIME1) | 0
  for (let i = 0; i + 16 <= length; i += 16) {
    v1 = round(v1, i)
    v2 = round(v2, i + 4)
    v3 = round(v3, i + 8)
    v4 = round(v4, i + 12)
  }
  return ((v1 << 1) | (v1 >>> 31)) + ((v2 << 7) | (v2 >>> 25)) + ((v3 << 12) | (v3 >>> 20)) + ((v4 << 18) | (v4 >>> 14))
}

/**
 * Points {@link bytes} at the key's bytes and returns their length: a string's UTF-8 (an ASCII one
 * copied char by char, any other through TextEncoder, which writes a lone surrogate as U+FFFD as
 * docs/SPEC.md says), a Uint8Array as it is.
 * @throws BloomError `BLOOM_INVALID_KEY`, as the full filter does, for anything else and for a
 *   Uint8Array whose buffer was detached (it would read as the empty key).
 */
function keyBytes(key: BloomKey): number {
  if (typeof key === 'string') {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (scratch.length < key.length * 3) scratch = new Uint8Array(key.length * 3)
    bytes = scratch
    return encoder.encodeInto(key, scratch).written
  }
  if (key instanceof Uint8Array) {
    // Making a view of a detached buffer throws, on every engine (ArrayBuffer#detached is newer).
    try {
      if (key.length === 0) new Uint8Array(key.buffer)
      bytes = key
      return key.length
    } catch {
      // falls through to the refusal
    }
  }
  throw new BloomError('BLOOM_INVALID_KEY', 'key must be a string or a Uint8Array (not detached)')
}

/** XXH32's step for a 4-byte word `w` (already multiplied by PRIME3) on lane `h`. */
function mix4(h: number, w: number): number {
  h += w // shifts take their operand mod 2^32, so the sum rotates as its 32-bit wrap would
  return imul((h << 17) | (h >>> 15), PRIME4)
}

/** XXH32's step for one byte `w` (already multiplied by PRIME5) on lane `h`. */
function mix1(h: number, w: number): number {
  h += w
  return imul((h << 11) | (h >>> 21), PRIME1)
}

/** XXH32's final avalanche of lane `h`. */
function avalanche(h: number): number {
  h = imul(h ^ (h >>> 15), PRIME2)
  h = imul(h ^ (h >>> 13), PRIME3)
  return h ^ (h >>> 16)
}

/**
 * The key's two hashes (docs/SPEC.md section 2), XXH32 with `seed` and with `seed` XOR 0x9E3779B9,
 * written to `out` as signed 32-bit integers. Both lanes run in one pass over all but the 16-byte
 * stripes (each word read once); an ASCII string shorter than 16 is read char by char, uncopied.
 */
export function hashKey(key: BloomKey, seed: number, out: Int32Array): void {
  const seedB = seed ^ LANE_B_SEED_XOR
  let length: number
  let a: number
  let b: number
  let i = 0
  let w: number
  if (typeof key === 'string' && (length = key.length) < 16) {
    // Char codes are the UTF-8 bytes while every one is below 0x80; `seen` says whether they were.
    let seen = 0
    a = seed + PRIME5 + length
    b = seedB + PRIME5 + length
    for (; i + 4 <= length; i += 4) {
      const c0 = key.charCodeAt(i), c1 = key.charCodeAt(i + 1), c2 = key.charCodeAt(i + 2), c3 = key.charCodeAt(i + 3)
      seen |= c0 | c1 | c2 | c3
      w = imul(c0 | (c1 << 8) | (c2 << 16) | (c3 << 24), PRIME3)
      a = mix4(a, w)
      b = mix4(b, w)
    }
    for (; i < length; i++) {
      w = key.charCodeAt(i)
      seen |= w
      w = imul(w, PRIME5)
      a = mix1(a, w)
      b = mix1(b, w)
    }
    if (seen < 0x80) {
      out[0] = avalanche(a)
      out[1] = avalanche(b)
      return
    }
    i = 0
  }
  length = keyBytes(key)
  const key8 = bytes // a local: the module's binding is a context slot, reloaded on every read
  a = (length < 16 ? seed + PRIME5 : stripes(length, seed)) + length
  b = (length < 16 ? seedB + PRIME5 : stripes(length, seedB)) + length
  for (i = length & ~15; i + 4 <= length; i += 4) {
    w = imul(key8[i] | (key8[i + 1] << 8) | (key8[i + 2] << 16) | (key8[i + 3] << 24), PRIME3)
    a = mix4(a, w)
    b = mix4(b, w)
  }
  for (; i < length; i++) {
    w = imul(key8[i], PRIME5)
    a = mix1(a, w)
    b = mix1(b, w)
  }
  out[0] = avalanche(a)
  out[1] = avalanche(b)
}
