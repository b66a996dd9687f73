/**
 * bloomkit's string hashing as it was before issue 25 (commit c01c04c, core/src/xxhash32.ts'
 * xxh32PairAscii, which every ASCII string key took in Node 20), frozen here so that each run of
 * the hashing suite measures today's KeyHasher against it in the same process: the issue's target is
 * a ratio to it. Not used by any package.
 */

const imul = Math.imul
const PRIME1 = 0x9e3779b1 | 0
const PRIME2 = 0x85ebca77 | 0
const PRIME3 = 0xc2b2ae3d | 0
const PRIME4 = 0x27d4eb2f | 0
const PRIME5 = 0x165667b1 | 0

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

/** XXH32 of an ASCII string with two seeds into `out`, as before issue 25; false for a string that is not ASCII. */
export function xxh32PairAsciiBefore(s: string, seedA: number, seedB: number, out: Int32Array): boolean {
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

/**
 * KeyHasher's string path before issue 25 where WebAssembly is off (Node 20: every string), with the
 * same shape (a small `hash` that V8 inlines into its caller, the pass called from it), so that it
 * sits in a timed loop as the real one did.
 */
export class KeyHasherBefore {
  readonly pair = new Int32Array(2)
  readonly seedA: number
  readonly seedB: number
  private readonly wasmMinStringLength = 0x3fffffff

  constructor(seedA: number, seedB: number) {
    this.seedA = seedA
    this.seedB = seedB
  }

  hash(key: string): void {
    if (key.length < this.wasmMinStringLength && xxh32PairAsciiBefore(key, this.seedA, this.seedB, this.pair)) return
    this.hashEncoded(key)
  }

  /** Before issue 25 a non-ASCII key was encoded by TextEncoder first; the benchmark times ASCII keys only. */
  private hashEncoded(key: string): void {
    throw new Error(`KeyHasherBefore: not an ASCII key: ${key}`)
  }
}
