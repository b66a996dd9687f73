/**
 * XXH32, in plain JavaScript, computed for two seeds in one pass over the input.
 *
 * Bit-identical to the reference XXH32 (and so to xxhash-wasm's `h32`); see docs/SPEC.md.
 * Two lanes in one pass cost little more than one, because the input is read once.
 */

/**
 * `Math.imul` read once: in a sandbox such as Vercel's edge-runtime (a Node `vm` context) every
 * global lookup is slow (1M `Math.imul` calls: ~109 ms through the global, ~6 ms from a local).
 */
const imul = Math.imul
const PRIME1 = 0x9e3779b1 | 0
const PRIME2 = 0x85ebca77 | 0
const PRIME3 = 0xc2b2ae3d | 0
const PRIME4 = 0x27d4eb2f | 0
const PRIME5 = 0x165667b1 | 0

/*
 * Both functions write XXH32(input, seedA) to out[0] and XXH32(input, seedB) to out[1]: the same
 * 32 bits, read as signed. An Int32Array, reused, because V8 keeps its elements unboxed, where an
 * object's number fields above 2^30 are boxed doubles that every hash would write and read back.
 */

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r))
}

function round(acc: number, input: number): number {
  return imul(rotl((acc + imul(input, PRIME2)) | 0, 13), PRIME1)
}

function avalanche(h: number): number {
  h = imul(h ^ (h >>> 15), PRIME2)
  h = imul(h ^ (h >>> 13), PRIME3)
  return h ^ (h >>> 16)
}

/**
 * Hashes a string whose characters are all below U+0080, so that its char codes are its UTF-8 bytes.
 * Returns false, with `out` unspecified, as soon as the string turns out not to be ASCII.
 * (Everything is inlined by hand: this is the hot path of every add and has.) Its loops are
 * {@link xxh32PairBytes}' over char codes instead of bytes, kept as a second copy on purpose:
 * sharing them would take a read callback per word or a copy of the string into bytes per key.
 */
export function xxh32PairAscii(s: string, seedA: number, seedB: number, out: Int32Array): boolean {
  const length = s.length
  let seen = 0
  let i = 0
  let a: number
  let b: number
  if (length >= 16) {
    let a1 = (seedA + PRIME1 + PRIME2) | 0, a2 = (seedA + PRIME2) | 0, a3 = seedA | 0, a4 = (seedA - PRIME1) | 0
    let b1 = (seedB + PRIME1 + PRIME2) | 0, b2 = (seedB + PRIME2) | 0, b3 = seedB | 0, b4 = (seedB - PRIME1) | 0
    for (; i + 16 <= length; i += 16) {
      let c0 = s.charCodeAt(i), c1 = s.charCodeAt(i + 1), c2 = s.charCodeAt(i + 2), c3 = s.charCodeAt(i + 3)
      seen |= c0 | c1 | c2 | c3
      let w = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24)
      a1 = round(a1, w)
      b1 = round(b1, w)
      c0 = s.charCodeAt(i + 4); c1 = s.charCodeAt(i + 5); c2 = s.charCodeAt(i + 6); c3 = s.charCodeAt(i + 7)
      seen |= c0 | c1 | c2 | c3
      w = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24)
      a2 = round(a2, w)
      b2 = round(b2, w)
      c0 = s.charCodeAt(i + 8); c1 = s.charCodeAt(i + 9); c2 = s.charCodeAt(i + 10); c3 = s.charCodeAt(i + 11)
      seen |= c0 | c1 | c2 | c3
      w = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24)
      a3 = round(a3, w)
      b3 = round(b3, w)
      c0 = s.charCodeAt(i + 12); c1 = s.charCodeAt(i + 13); c2 = s.charCodeAt(i + 14); c3 = s.charCodeAt(i + 15)
      seen |= c0 | c1 | c2 | c3
      w = c0 | (c1 << 8) | (c2 << 16) | (c3 << 24)
      a4 = round(a4, w)
      b4 = round(b4, w)
    }
    a = (rotl(a1, 1) + rotl(a2, 7) + rotl(a3, 12) + rotl(a4, 18)) | 0
    b = (rotl(b1, 1) + rotl(b2, 7) + rotl(b3, 12) + rotl(b4, 18)) | 0
  } else {
    a = (seedA + PRIME5) | 0
    b = (seedB + PRIME5) | 0
  }
  a = (a + length) | 0
  b = (b + length) | 0
  for (; i + 4 <= length; i += 4) {
    const c0 = s.charCodeAt(i), c1 = s.charCodeAt(i + 1), c2 = s.charCodeAt(i + 2), c3 = s.charCodeAt(i + 3)
    seen |= c0 | c1 | c2 | c3
    const w = imul(c0 | (c1 << 8) | (c2 << 16) | (c3 << 24), PRIME3)
    a = (a + w) | 0
    a = imul((a << 17) | (a >>> 15), PRIME4)
    b = (b + w) | 0
    b = imul((b << 17) | (b >>> 15), PRIME4)
  }
  for (; i < length; i++) {
    const c = s.charCodeAt(i)
    seen |= c
    const w = imul(c, PRIME5)
    a = (a + w) | 0
    a = imul((a << 11) | (a >>> 21), PRIME1)
    b = (b + w) | 0
    b = imul((b << 11) | (b >>> 21), PRIME1)
  }
  // Any char code above 0x7f (including UTF-16 units above 0xff) means the string is not ASCII.
  if (seen > 0x7f) return false
  out[0] = avalanche(a)
  out[1] = avalanche(b)
  return true
}

function wordAt(bytes: Uint8Array, i: number): number {
  return bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)
}

/** Hashes `bytes[0, length)` with both seeds. */
export function xxh32PairBytes(bytes: Uint8Array, length: number, seedA: number, seedB: number, out: Int32Array): void {
  let i = 0
  let a: number
  let b: number
  if (length >= 16) {
    let a1 = (seedA + PRIME1 + PRIME2) | 0, a2 = (seedA + PRIME2) | 0, a3 = seedA | 0, a4 = (seedA - PRIME1) | 0
    let b1 = (seedB + PRIME1 + PRIME2) | 0, b2 = (seedB + PRIME2) | 0, b3 = seedB | 0, b4 = (seedB - PRIME1) | 0
    for (; i + 16 <= length; i += 16) {
      const w1 = wordAt(bytes, i), w2 = wordAt(bytes, i + 4), w3 = wordAt(bytes, i + 8), w4 = wordAt(bytes, i + 12)
      a1 = round(a1, w1); a2 = round(a2, w2); a3 = round(a3, w3); a4 = round(a4, w4)
      b1 = round(b1, w1); b2 = round(b2, w2); b3 = round(b3, w3); b4 = round(b4, w4)
    }
    a = (rotl(a1, 1) + rotl(a2, 7) + rotl(a3, 12) + rotl(a4, 18)) | 0
    b = (rotl(b1, 1) + rotl(b2, 7) + rotl(b3, 12) + rotl(b4, 18)) | 0
  } else {
    a = (seedA + PRIME5) | 0
    b = (seedB + PRIME5) | 0
  }
  a = (a + length) | 0
  b = (b + length) | 0
  for (; i + 4 <= length; i += 4) {
    const w = wordAt(bytes, i)
    a = imul(rotl((a + imul(w, PRIME3)) | 0, 17), PRIME4)
    b = imul(rotl((b + imul(w, PRIME3)) | 0, 17), PRIME4)
  }
  for (; i < length; i++) {
    const c = bytes[i]
    a = imul(rotl((a + imul(c, PRIME5)) | 0, 11), PRIME1)
    b = imul(rotl((b + imul(c, PRIME5)) | 0, 11), PRIME1)
  }
  out[0] = avalanche(a)
  out[1] = avalanche(b)
}
