import type { XXHashAPI } from 'xxhash-wasm'
import { BloomError } from './errors.js'
import { xxh32PairAscii, xxh32PairBytes } from './xxhash32.js'

/** What a filter accepts as a key: a string (hashed as its UTF-8 bytes) or raw bytes. */
export type BloomKey = string | Uint8Array

/** Lane B's seed is lane A's XOR this constant (docs/SPEC.md, "Hashing"). */
export const LANE_B_SEED_XOR = 0x9e3779b9

/**
 * String keys at least this long (in UTF-16 units) go to xxhash-wasm when it is available: below
 * it the pure-JS pass wins (no encoding, no boundary crossing), above it WebAssembly's speed per
 * byte wins. Measured by the benchmark's "hashing" suite (a tie at 64 chars, wasm 1.4× at 128).
 */
export const WASM_MIN_STRING_LENGTH = 96

/** The same crossover for Uint8Array keys, which reach WebAssembly without encoding (wasm wins from 32 bytes). */
export const WASM_MIN_BYTE_LENGTH = 32

let wasm: Promise<XXHashAPI | undefined> | undefined

/**
 * Whether this runtime may call xxhash-wasm from the hot path. Not in Node before 22 (V8 11):
 * TurboFan's inlining of JS→Wasm calls there crashed the process (SIGSEGV) in our test runs, and
 * the crash went away with `--no-turbo-inline-js-wasm-calls`. There the pure-JS pass, which gives
 * the same hashes, serves every key; likewise in Vercel's edge-runtime and Cloudflare Workers.
 * Browsers, Deno, Bun and newer Node use WebAssembly.
 */
export function wasmHashingSafe(): boolean {
  // Vercel's edge-runtime runs code in a `vm` context of the host Node, without `process`: its V8
  // may be Node 20's, and the pure-JS pass was faster there anyway.
  if ((globalThis as { EdgeRuntime?: unknown }).EdgeRuntime !== undefined) return false
  // Cloudflare Workers (workerd) refuse to compile WebAssembly at run time; a bundle built with
  // xxhash-wasm's `workerd` export condition loads it as a module instead, but there its
  // `TextEncoder.encodeInto` made long keys ~2.5× slower than the pure-JS pass (measured when issue
  // 16 was filed), so the pure-JS pass serves every key there too.
  if ((globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers') return false
  const v8 = (globalThis as { process?: { versions?: { v8?: string } } }).process?.versions?.v8
  return v8 === undefined || Number(v8.split('.')[0]) >= 12
}

/**
 * Compiles xxhash-wasm once per process. Resolves to undefined, so that every key takes the pure-JS
 * path (same hashes), where WebAssembly is missing or forbidden (a page CSP without
 * 'wasm-unsafe-eval', `node --jitless`) or not safe to call (see {@link wasmHashingSafe}).
 */
export function loadWasmHasher(): Promise<XXHashAPI | undefined> {
  // Imported only here, so a runtime that never uses WebAssembly never loads xxhash-wasm, and a
  // bundler that splits chunks keeps its ~2 KB (gzip) out of the main bundle.
  wasm ??= wasmHashingSafe()
    ? import('xxhash-wasm').then(({ default: xxhash }) => xxhash()).catch(() => undefined)
    : Promise.resolve(undefined)
  return wasm
}

/**
 * Hashes keys to the two 32-bit values that place them in a filter: XXH32 of the key's bytes
 * with two seeds. Results land in `pair` (read them as `a` and `b`), so hashing allocates nothing.
 */
export class KeyHasher {
  /** The last key's XXH32 with seedA ([0]) and seedB ([1]), as signed 32-bit integers: the hot paths read these. */
  readonly pair = new Int32Array(2)
  readonly seedA: number
  readonly seedB: number
  /** Whether xxhash-wasm serves long keys; false where WebAssembly is unavailable. */
  readonly usesWasm: boolean
  private readonly wasm: XXHashAPI | undefined
  /**
   * Strings shorter than this take the pure-JS pass: WASM_MIN_STRING_LENGTH, or without WebAssembly
   * 2^30 − 1, longer than any string V8 makes (and a small integer, where Infinity would be a boxed
   * double that every hash unboxes; longer strings still reach the pure-JS pass through hashOther).
   */
  private readonly wasmMinStringLength: number
  private readonly encoder = new TextEncoder()
  private scratch = new Uint8Array(256)

  /** Prefer {@link createKeyHasher}, which loads xxhash-wasm first. */
  constructor(seed: number, wasmApi?: XXHashAPI) {
    this.seedA = seed >>> 0
    this.seedB = (seed ^ LANE_B_SEED_XOR) >>> 0
    this.wasm = wasmApi
    this.usesWasm = wasmApi !== undefined
    this.wasmMinStringLength = wasmApi === undefined ? 0x3fffffff : WASM_MIN_STRING_LENGTH
  }

  /** The last key's XXH32 with seedA, unsigned. */
  get a(): number {
    return this.pair[0] >>> 0
  }

  /** The last key's XXH32 with seedB, unsigned. */
  get b(): number {
    return this.pair[1] >>> 0
  }

  /** Sets `pair` (so `a` and `b`) for `key`. Throws `BLOOM_INVALID_KEY` for anything but a string or Uint8Array. */
  hash(key: BloomKey): void {
    // The common case first, in a method small enough for V8 to inline into every add and has.
    if (typeof key === 'string' && key.length < this.wasmMinStringLength && xxh32PairAscii(key, this.seedA, this.seedB, this.pair)) return
    this.hashOther(key)
  }

  private hashOther(key: BloomKey): void {
    if (typeof key === 'string') {
      if (key.length < WASM_MIN_STRING_LENGTH || this.wasm === undefined) {
        if (!xxh32PairAscii(key, this.seedA, this.seedB, this.pair)) this.hashEncoded(key)
      } else {
        this.pair[0] = this.wasm.h32(key, this.seedA)
        this.pair[1] = this.wasm.h32(key, this.seedB)
      }
    } else if (key instanceof Uint8Array) {
      if (key.length < WASM_MIN_BYTE_LENGTH || this.wasm === undefined) {
        xxh32PairBytes(key, key.length, this.seedA, this.seedB, this.pair)
      } else {
        this.pair[0] = this.wasm.h32Raw(key, this.seedA)
        this.pair[1] = this.wasm.h32Raw(key, this.seedB)
      }
    } else {
      throw invalidKeyError(key)
    }
  }

  /** A short string with non-ASCII characters: encode it into the reused buffer, then hash the bytes. */
  private hashEncoded(key: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit.
    if (this.scratch.length < key.length * 3) this.scratch = new Uint8Array(key.length * 3)
    const { written } = this.encoder.encodeInto(key, this.scratch)
    xxh32PairBytes(this.scratch, written, this.seedA, this.seedB, this.pair)
  }
}

/** `BLOOM_INVALID_KEY` for a key that is neither a string nor a Uint8Array. */
export function invalidKeyError(key: unknown): BloomError {
  return new BloomError('BLOOM_INVALID_KEY', `key must be a string or a Uint8Array; got ${describeKey(key)}`)
}

function describeKey(key: unknown): string {
  if (key === null) return 'null'
  if (typeof key !== 'object') return typeof key
  return Object.prototype.toString.call(key)
}

/** A {@link KeyHasher} with xxhash-wasm loaded where the runtime allows it. */
export async function createKeyHasher(seed: number): Promise<KeyHasher> {
  return new KeyHasher(seed, await loadWasmHasher())
}
