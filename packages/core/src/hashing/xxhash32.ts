/**
 * XXH32, in plain JavaScript, computed for two seeds in one pass over the input.
 *
 * Bit-identical to the reference XXH32 (and so to xxhash-wasm's `h32`); see docs/SPEC.md.
 * Two lanes in one pass cost little more than one, because the input is read once.
 *
 * Every round is written out by hand, with no helper function: when TurboFan compiled the pass while
 * its 16-byte loop was still cold (a process that had hashed short keys first), it left the helpers
 * as real calls, 8 per 16 bytes, for good, and 16–64-char keys cost 2–4× (`--trace-turbo-inlining`:
 * `round` considered, never a candidate; issue 25).
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

/** Whether an Int32Array reads bytes as little-endian words, as XXH32 does (every platform JS runs on today). */
export const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1

/*
 * Every function writes XXH32(input, seedA) to out[0] and XXH32(input, seedB) to out[1]: the same
 * 32 bits, read as signed. An Int32Array, reused, because V8 keeps its elements unboxed, where an
 * object's number fields above 2^30 are boxed doubles that every hash would write and read back.
 */

/**
 * Hashes a string whose characters are all below U+0080, so that its char codes are its UTF-8 bytes.
 * Returns false, with `out` unspecified, as soon as the string turns out not to be ASCII.
 * Its loops are {@link xxh32PairWords}' over char codes instead of words, kept as a second copy on
 * purpose: sharing them would take a read callback per word or a copy of the string per key.
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
      let w = imul(c0 | (c1 << 8) | (c2 << 16) | (c3 << 24), PRIME2)
      let t = (a1 + w) | 0
      a1 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b1 + w) | 0
      b1 = imul((t << 13) | (t >>> 19), PRIME1)
      c0 = s.charCodeAt(i + 4); c1 = s.charCodeAt(i + 5); c2 = s.charCodeAt(i + 6); c3 = s.charCodeAt(i + 7)
      seen |= c0 | c1 | c2 | c3
      w = imul(c0 | (c1 << 8) | (c2 << 16) | (c3 << 24), PRIME2)
      t = (a2 + w) | 0
      a2 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b2 + w) | 0
      b2 = imul((t << 13) | (t >>> 19), PRIME1)
      c0 = s.charCodeAt(i + 8); c1 = s.charCodeAt(i + 9); c2 = s.charCodeAt(i + 10); c3 = s.charCodeAt(i + 11)
      seen |= c0 | c1 | c2 | c3
      w = imul(c0 | (c1 << 8) | (c2 << 16) | (c3 << 24), PRIME2)
      t = (a3 + w) | 0
      a3 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b3 + w) | 0
      b3 = imul((t << 13) | (t >>> 19), PRIME1)
      c0 = s.charCodeAt(i + 12); c1 = s.charCodeAt(i + 13); c2 = s.charCodeAt(i + 14); c3 = s.charCodeAt(i + 15)
      seen |= c0 | c1 | c2 | c3
      w = imul(c0 | (c1 << 8) | (c2 << 16) | (c3 << 24), PRIME2)
      t = (a4 + w) | 0
      a4 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b4 + w) | 0
      b4 = imul((t << 13) | (t >>> 19), PRIME1)
    }
    a = (((a1 << 1) | (a1 >>> 31)) + ((a2 << 7) | (a2 >>> 25)) + ((a3 << 12) | (a3 >>> 20)) + ((a4 << 18) | (a4 >>> 14))) | 0
    b = (((b1 << 1) | (b1 >>> 31)) + ((b2 << 7) | (b2 >>> 25)) + ((b3 << 12) | (b3 >>> 20)) + ((b4 << 18) | (b4 >>> 14))) | 0
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
  a = imul(a ^ (a >>> 15), PRIME2)
  a = imul(a ^ (a >>> 13), PRIME3)
  out[0] = a ^ (a >>> 16)
  b = imul(b ^ (b >>> 15), PRIME2)
  b = imul(b ^ (b >>> 13), PRIME3)
  out[1] = b ^ (b >>> 16)
  return true
}

/**
 * Hashes `bytes[0, length)`, reading whole words from `words`, an Int32Array over the same memory
 * starting at the same byte (so `bytes.byteOffset` must be a multiple of 4). One load a word instead
 * of four byte loads, shifts and ORs: the fast path for keys already copied into a scratch buffer.
 * Only where {@link LITTLE_ENDIAN}.
 */
export function xxh32PairWords(bytes: Uint8Array, words: Int32Array, length: number, seedA: number, seedB: number, out: Int32Array): void {
  const wordCount = length >>> 2
  let j = 0
  let a: number
  let b: number
  if (length >= 16) {
    let a1 = (seedA + PRIME1 + PRIME2) | 0, a2 = (seedA + PRIME2) | 0, a3 = seedA | 0, a4 = (seedA - PRIME1) | 0
    let b1 = (seedB + PRIME1 + PRIME2) | 0, b2 = (seedB + PRIME2) | 0, b3 = seedB | 0, b4 = (seedB - PRIME1) | 0
    const stripes = wordCount & ~3
    for (; j < stripes; j += 4) {
      let w = imul(words[j], PRIME2)
      let t = (a1 + w) | 0
      a1 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b1 + w) | 0
      b1 = imul((t << 13) | (t >>> 19), PRIME1)
      w = imul(words[j + 1], PRIME2)
      t = (a2 + w) | 0
      a2 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b2 + w) | 0
      b2 = imul((t << 13) | (t >>> 19), PRIME1)
      w = imul(words[j + 2], PRIME2)
      t = (a3 + w) | 0
      a3 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b3 + w) | 0
      b3 = imul((t << 13) | (t >>> 19), PRIME1)
      w = imul(words[j + 3], PRIME2)
      t = (a4 + w) | 0
      a4 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b4 + w) | 0
      b4 = imul((t << 13) | (t >>> 19), PRIME1)
    }
    a = (((a1 << 1) | (a1 >>> 31)) + ((a2 << 7) | (a2 >>> 25)) + ((a3 << 12) | (a3 >>> 20)) + ((a4 << 18) | (a4 >>> 14))) | 0
    b = (((b1 << 1) | (b1 >>> 31)) + ((b2 << 7) | (b2 >>> 25)) + ((b3 << 12) | (b3 >>> 20)) + ((b4 << 18) | (b4 >>> 14))) | 0
  } else {
    a = (seedA + PRIME5) | 0
    b = (seedB + PRIME5) | 0
  }
  a = (a + length) | 0
  b = (b + length) | 0
  for (; j < wordCount; j++) {
    const w = imul(words[j], PRIME3)
    a = (a + w) | 0
    a = imul((a << 17) | (a >>> 15), PRIME4)
    b = (b + w) | 0
    b = imul((b << 17) | (b >>> 15), PRIME4)
  }
  for (let i = wordCount << 2; i < length; i++) {
    const w = imul(bytes[i], PRIME5)
    a = (a + w) | 0
    a = imul((a << 11) | (a >>> 21), PRIME1)
    b = (b + w) | 0
    b = imul((b << 11) | (b >>> 21), PRIME1)
  }
  a = imul(a ^ (a >>> 15), PRIME2)
  a = imul(a ^ (a >>> 13), PRIME3)
  out[0] = a ^ (a >>> 16)
  b = imul(b ^ (b >>> 15), PRIME2)
  b = imul(b ^ (b >>> 13), PRIME3)
  out[1] = b ^ (b >>> 16)
}

/**
 * Hashes `bytes[start, start + length)` with both seeds, at any byte offset and on any platform:
 * Uint8Array keys, the CLI's bulk build, and a batch of keys encoded back to back (KeyHasher's
 * hashMany), whose two hashes land in `out[outAt]` and `out[outAt + 1]`. {@link xxh32PairWords}'
 * loops with four byte loads a word, a copy kept on purpose (a shared loop would take a read
 * callback per word, or a copy of every key).
 */
export function xxh32PairBytes(bytes: Uint8Array, length: number, seedA: number, seedB: number, out: Int32Array, start = 0, outAt = 0): void {
  let i = start
  const end = start + length
  let a: number
  let b: number
  if (length >= 16) {
    let a1 = (seedA + PRIME1 + PRIME2) | 0, a2 = (seedA + PRIME2) | 0, a3 = seedA | 0, a4 = (seedA - PRIME1) | 0
    let b1 = (seedB + PRIME1 + PRIME2) | 0, b2 = (seedB + PRIME2) | 0, b3 = seedB | 0, b4 = (seedB - PRIME1) | 0
    for (; i + 16 <= end; i += 16) {
      let w = imul(bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24), PRIME2)
      let t = (a1 + w) | 0
      a1 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b1 + w) | 0
      b1 = imul((t << 13) | (t >>> 19), PRIME1)
      w = imul(bytes[i + 4] | (bytes[i + 5] << 8) | (bytes[i + 6] << 16) | (bytes[i + 7] << 24), PRIME2)
      t = (a2 + w) | 0
      a2 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b2 + w) | 0
      b2 = imul((t << 13) | (t >>> 19), PRIME1)
      w = imul(bytes[i + 8] | (bytes[i + 9] << 8) | (bytes[i + 10] << 16) | (bytes[i + 11] << 24), PRIME2)
      t = (a3 + w) | 0
      a3 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b3 + w) | 0
      b3 = imul((t << 13) | (t >>> 19), PRIME1)
      w = imul(bytes[i + 12] | (bytes[i + 13] << 8) | (bytes[i + 14] << 16) | (bytes[i + 15] << 24), PRIME2)
      t = (a4 + w) | 0
      a4 = imul((t << 13) | (t >>> 19), PRIME1)
      t = (b4 + w) | 0
      b4 = imul((t << 13) | (t >>> 19), PRIME1)
    }
    a = (((a1 << 1) | (a1 >>> 31)) + ((a2 << 7) | (a2 >>> 25)) + ((a3 << 12) | (a3 >>> 20)) + ((a4 << 18) | (a4 >>> 14))) | 0
    b = (((b1 << 1) | (b1 >>> 31)) + ((b2 << 7) | (b2 >>> 25)) + ((b3 << 12) | (b3 >>> 20)) + ((b4 << 18) | (b4 >>> 14))) | 0
  } else {
    a = (seedA + PRIME5) | 0
    b = (seedB + PRIME5) | 0
  }
  a = (a + length) | 0
  b = (b + length) | 0
  for (; i + 4 <= end; i += 4) {
    const w = imul(bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24), PRIME3)
    a = (a + w) | 0
    a = imul((a << 17) | (a >>> 15), PRIME4)
    b = (b + w) | 0
    b = imul((b << 17) | (b >>> 15), PRIME4)
  }
  for (; i < end; i++) {
    const w = imul(bytes[i], PRIME5)
    a = (a + w) | 0
    a = imul((a << 11) | (a >>> 21), PRIME1)
    b = (b + w) | 0
    b = imul((b << 11) | (b >>> 21), PRIME1)
  }
  a = imul(a ^ (a >>> 15), PRIME2)
  a = imul(a ^ (a >>> 13), PRIME3)
  out[outAt] = a ^ (a >>> 16)
  b = imul(b ^ (b >>> 15), PRIME2)
  b = imul(b ^ (b >>> 13), PRIME3)
  out[outAt + 1] = b ^ (b >>> 16)
}

/**
 * Writes `s`'s UTF-8 encoding to `bytes` (at least 3 bytes per UTF-16 unit) and returns its length:
 * TextEncoder's bytes (a lone surrogate becomes U+FFFD, EF BF BD) without TextEncoder's call, which
 * costs more than a short key's whole hash.
 */
export function encodeUtf8(s: string, bytes: Uint8Array): number {
  const length = s.length
  let n = 0
  for (let i = 0; i < length; i++) {
    let c = s.charCodeAt(i)
    if (c < 0x80) {
      bytes[n++] = c
    } else if (c < 0x800) {
      bytes[n++] = 0xc0 | (c >>> 6)
      bytes[n++] = 0x80 | (c & 0x3f)
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < length ? s.charCodeAt(i + 1) : 0
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00)
          i++
          bytes[n++] = 0xf0 | (c >>> 18)
          bytes[n++] = 0x80 | ((c >>> 12) & 0x3f)
          bytes[n++] = 0x80 | ((c >>> 6) & 0x3f)
          bytes[n++] = 0x80 | (c & 0x3f)
          continue
        }
        c = 0xfffd
      }
      bytes[n++] = 0xe0 | (c >>> 12)
      bytes[n++] = 0x80 | ((c >>> 6) & 0x3f)
      bytes[n++] = 0x80 | (c & 0x3f)
    }
  }
  return n
}
