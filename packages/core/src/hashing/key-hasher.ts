import { BloomError, describe } from '../errors.js'
import { encodeUtf8, LITTLE_ENDIAN, xxh32PairAscii, xxh32PairBytes, xxh32PairWords } from './xxhash32.js'
import { compileWasmXxh32, type WasmXxh32 } from './xxhash32-wasm.js'

/** What a filter accepts as a key: a string (hashed as its UTF-8 bytes) or raw bytes. */
export type BloomKey = string | Uint8Array

/** Lane B's seed is lane A's XOR this constant (docs/SPEC.md, "Hashing"). */
export const LANE_B_SEED_XOR = 0x9e3779b9

/**
 * String keys at least this long (in UTF-16 units) go to WebAssembly when it is available: below
 * it the pure-JS pass wins (no encoding, no boundary crossing), above it WebAssembly's speed per
 * byte wins. Measured by the benchmark's "hashing" suite (a tie at 64 chars, wasm 1.4× at 128).
 */
export const WASM_MIN_STRING_LENGTH = 96

/** The same crossover for Uint8Array keys, which reach WebAssembly without encoding (wasm wins from 32 bytes). */
export const WASM_MIN_BYTE_LENGTH = 32

/**
 * String keys at least this long are encoded by TextEncoder.encodeInto into a reused buffer and
 * hashed a word at a time: past it the native encoder plus one load per word beat a char-code read
 * per byte (the "hashing" suite; not in Cloudflare Workers, whose encodeInto is slow, see
 * {@link encodeIntoFast}).
 */
export const ENCODE_MIN_STRING_LENGTH = 32

/**
 * Batches of fewer keys than this are hashed key by key by {@link KeyHasher.hashMany}: joining and
 * one encodeInto cost a fixed ~0.1–0.3 µs that a few keys do not win back.
 */
export const MANY_MIN_KEYS = 8

/** A batch of more chars than this is hashed key by key, so that the joined copy and its bytes stay small (~1–4 MB). */
const MANY_MAX_CHARS = 1 << 20

/**
 * V8 makes every string shorter than this flat (ConsString::kMinLength), however it was built. A
 * batch of only such keys is hashed key by key: the char-code pass reads a flat key faster than
 * joining copies it (~12 ns a key), and joining wins only over keys built by concatenation (which
 * each key's first read would flatten, allocating) or long enough for WebAssembly's speed per byte.
 */
const ALWAYS_FLAT_BELOW = 13

let wasm: Promise<WasmXxh32 | undefined> | undefined

/**
 * Whether this runtime may call WebAssembly from the hot path. Not in Node before 22 (V8 11):
 * TurboFan's inlining of JS→Wasm calls there crashed the process (SIGSEGV) in our test runs, and
 * the crash went away with `--no-turbo-inline-js-wasm-calls`. There the pure-JS pass, which gives
 * the same hashes, serves every key; likewise in Vercel's edge-runtime and Cloudflare Workers.
 * Browsers, Deno, Bun and newer Node use WebAssembly.
 */
export function wasmHashingSafe(): boolean {
  // Vercel's edge-runtime runs code in a `vm` context of the host Node, without `process`: its V8
  // may be Node 20's, and the pure-JS pass was faster there anyway.
  if ((globalThis as { EdgeRuntime?: unknown }).EdgeRuntime !== undefined) return false
  // Cloudflare Workers (workerd) refuse to compile WebAssembly at run time, and there
  // `TextEncoder.encodeInto`, which WebAssembly hashing needs, made long keys ~2.5× slower than the
  // pure-JS pass (measured when issue 16 was filed), so the pure-JS pass serves every key there.
  if ((globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers') return false
  const v8 = (globalThis as { process?: { versions?: { v8?: string } } }).process?.versions?.v8
  return v8 === undefined || Number(v8.split('.')[0]) >= 12
}

/**
 * Compiles core's WebAssembly XXH32 (xxhash32.wat) once per process. Resolves to undefined, so
 * that every key takes the pure-JS path (same hashes), where WebAssembly is missing or forbidden
 * (a page CSP without 'wasm-unsafe-eval', `node --jitless`) or not safe to call (see {@link wasmHashingSafe}).
 */
export function loadWasmHasher(): Promise<WasmXxh32 | undefined> {
  wasm ??= wasmHashingSafe() ? compileWasmXxh32().catch(() => undefined) : Promise.resolve(undefined)
  return wasm
}

/**
 * Whether TextEncoder.encodeInto is cheap enough for long string keys: everywhere but Cloudflare
 * Workers (workerd), where it made long keys ~2.5× slower than the char-code pass (issue 16).
 */
export function encodeIntoFast(): boolean {
  return (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent !== 'Cloudflare-Workers'
}

/**
 * Hashes keys to the two 32-bit values that place them in a filter: XXH32 of the key's bytes
 * with two seeds. Results land in `pair` (read them as `a` and `b`), so hashing allocates nothing.
 *
 * Which pass serves a key depends only on its type and length (all give the same hashes): a string
 * shorter than {@link ENCODE_MIN_STRING_LENGTH} is read char code by char code (an ASCII key needs no
 * encoding; another is encoded inline, by {@link encodeUtf8}); a longer one goes through
 * TextEncoder.encodeInto and a word-at-a-time pass, or through WebAssembly (xxhash32.wat) from
 * {@link WASM_MIN_STRING_LENGTH} where WebAssembly is on.
 */
export class KeyHasher {
  /** The last key's XXH32 with seedA ([0]) and seedB ([1]), as signed 32-bit integers: the hot paths read these. */
  readonly pair = new Int32Array(2)
  readonly seedA: number
  readonly seedB: number
  /** Whether WebAssembly serves long keys; false where it is unavailable. */
  readonly usesWasm: boolean
  private readonly wasm: WasmXxh32 | undefined
  /**
   * Strings shorter than this take the char-code pass first. A small integer even where nothing else
   * serves long strings (2^30 − 1, longer than any string V8 makes), where Infinity would be a boxed
   * double that every hash unboxes.
   */
  private readonly charPassMaxLength: number
  /** Whether long strings go through TextEncoder.encodeInto (see {@link encodeIntoFast}). */
  private readonly encodeLong: boolean
  private readonly encoder = new TextEncoder()
  /** Reused for encoded strings and copied byte keys; `words` views the same memory. */
  private bytes = new Uint8Array(256)
  private words = new Int32Array(this.bytes.buffer)

  /** Prefer {@link createKeyHasher}, which loads the WebAssembly hash first. */
  constructor(seed: number, wasmApi?: WasmXxh32) {
    this.seedA = seed >>> 0
    this.seedB = (seed ^ LANE_B_SEED_XOR) >>> 0
    this.wasm = wasmApi
    this.usesWasm = wasmApi !== undefined
    this.encodeLong = encodeIntoFast()
    this.charPassMaxLength = this.encodeLong ? ENCODE_MIN_STRING_LENGTH : wasmApi === undefined ? 0x3fffffff : WASM_MIN_STRING_LENGTH
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
    if (typeof key === 'string' && key.length < this.charPassMaxLength && xxh32PairAscii(key, this.seedA, this.seedB, this.pair)) return
    this.hashOther(key)
  }

  /**
   * Hashes `keys[from, from + count)` into `pairs`: key i's XXH32 with seedA in `pairs[2i]`, with
   * seedB in `pairs[2i + 1]`, the same values as {@link hash}. A batch of ASCII strings is joined
   * and encoded once (one encodeInto, rather than a char-code read or an encodeInto per key, and a
   * key built by a template literal is never flattened on its own) and hashed in one pass over the
   * bytes: by one WebAssembly call where WebAssembly serves, else in JS from byte offsets. Any other
   * batch (a Uint8Array or a non-ASCII key among them, a small one, or one of keys too short to be
   * anything but flat) takes {@link hash} key by key.
   * @throws BloomError `BLOOM_INVALID_KEY` as {@link hash} does.
   */
  hashMany(keys: readonly BloomKey[], from: number, count: number, pairs: Int32Array): void {
    if (count >= MANY_MIN_KEYS && this.encodeLong && this.hashJoined(keys, from, count, pairs)) return
    const pair = this.pair
    for (let i = 0; i < count; i++) {
      this.hash(keys[from + i])
      pairs[2 * i] = pair[0]
      pairs[2 * i + 1] = pair[1]
    }
  }

  /** {@link hashMany}'s one pass; false, with `pairs` unspecified, when the batch is not all ASCII strings. */
  private hashJoined(keys: readonly BloomKey[], from: number, count: number, pairs: Int32Array): boolean {
    const to = from + count
    let chars = 0
    let longest = 0
    for (let i = from; i < to; i++) {
      const key = keys[i]
      if (typeof key !== 'string') return false
      chars += key.length
      if (key.length > longest) longest = key.length
    }
    if (longest < ALWAYS_FLAT_BELOW || chars > MANY_MAX_CHARS) return false
    const strings = keys as readonly string[]
    const joined = (from === 0 && to === keys.length ? strings : strings.slice(from, to)).join('')
    if (this.wasm !== undefined) return this.wasm.hashJoined(joined, strings, from, count, this.seedA, this.seedB, pairs)
    this.reserve(chars * 3)
    // Not ASCII: a key's bytes need not start where its chars do, so the caller goes key by key.
    if (this.encoder.encodeInto(joined, this.bytes).written !== chars) return false
    const bytes = this.bytes
    for (let i = 0, offset = 0; i < count; i++) {
      const length = strings[from + i].length
      xxh32PairBytes(bytes, length, this.seedA, this.seedB, pairs, offset, 2 * i)
      offset += length
    }
    return true
  }

  private hashOther(key: BloomKey): void {
    if (typeof key === 'string') {
      const length = key.length
      if (length >= WASM_MIN_STRING_LENGTH && this.wasm !== undefined) {
        this.wasm.hashString(key, this.seedA, this.seedB, this.pair)
      } else if (length >= this.charPassMaxLength && this.encodeLong) {
        this.reserve(length * 3)
        this.hashScratch(this.encoder.encodeInto(key, this.bytes).written)
      } else {
        // Not ASCII: UTF-8 needs at most 3 bytes per UTF-16 code unit.
        this.reserve(length * 3)
        this.hashScratch(encodeUtf8(key, this.bytes))
      }
    } else if (key instanceof Uint8Array) {
      if (key.length === 0 && isDetached(key)) throw invalidKeyError(key)
      if (key.length >= WASM_MIN_BYTE_LENGTH && this.wasm !== undefined) {
        this.wasm.hashBytes(key, this.seedA, this.seedB, this.pair)
      } else {
        xxh32PairBytes(key, key.length, this.seedA, this.seedB, this.pair)
      }
    } else {
      throw invalidKeyError(key)
    }
  }

  /** Grows the scratch buffer to at least `length` bytes (rarely: it keeps the largest size seen). */
  private reserve(length: number): void {
    if (this.bytes.length >= length) return
    this.bytes = new Uint8Array(Math.max(length, this.bytes.length * 2) + 3)
    this.words = new Int32Array(this.bytes.buffer, 0, this.bytes.length >>> 2)
  }

  /** Hashes the scratch buffer's first `length` bytes, a word at a time where the platform reads words as XXH32 does. */
  private hashScratch(length: number): void {
    if (LITTLE_ENDIAN) xxh32PairWords(this.bytes, this.words, length, this.seedA, this.seedB, this.pair)
    else xxh32PairBytes(this.bytes, length, this.seedA, this.seedB, this.pair)
  }
}

/** `BLOOM_INVALID_KEY` for a key that is neither a string nor a Uint8Array, or a Uint8Array whose buffer was detached. */
export function invalidKeyError(key: unknown): BloomError {
  // A detached buffer's bytes are gone (transferred to a worker, or by structuredClone): it would read as the empty key.
  return new BloomError('BLOOM_INVALID_KEY', `key must be a string or a Uint8Array${key instanceof Uint8Array ? ' whose buffer is not detached' : ''}; got ${describe(key)}`)
}

/**
 * Why a filter cannot take `key`, or undefined: {@link invalidKeyError} for anything but a string
 * or a Uint8Array, or for a Uint8Array whose buffer was detached (it reads as length 0, and would
 * silently be the empty key). Only an empty view is looked at further, so the check costs a key
 * of any length one comparison.
 */
export function keyRefusal(key: unknown): BloomError | undefined {
  if (typeof key === 'string') return undefined
  if (!(key instanceof Uint8Array) || (key.length === 0 && isDetached(key))) return invalidKeyError(key)
  return undefined
}

/** Whether `view`'s buffer was detached (transferred away): a view of it reads as empty. */
function isDetached(view: Uint8Array): boolean {
  if (view.byteLength !== 0) return false
  const buffer = view.buffer as ArrayBuffer & { readonly detached?: boolean }
  // ArrayBuffer.prototype.detached exists from V8 11.4 (Node 22, current browsers); before it, only
  // making a view of a detached buffer throws.
  if (typeof buffer.detached === 'boolean') return buffer.detached
  if (buffer.byteLength !== 0) return false
  try {
    new Uint8Array(buffer)
    return false
  } catch {
    return true
  }
}

/** A {@link KeyHasher} with the WebAssembly hash loaded where the runtime allows it. */
export async function createKeyHasher(seed: number): Promise<KeyHasher> {
  return new KeyHasher(seed, await loadWasmHasher())
}
