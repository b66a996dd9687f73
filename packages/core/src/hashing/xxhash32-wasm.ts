import { XXH32_WASM_BASE64 } from './xxhash32-wasm-bytes.js'

/** Where the input starts in the module's memory; bytes 0–7 receive the two hashes. */
const INPUT = 16
const PAGE = 65_536

/**
 * XXH32 with two seeds in one pass, in WebAssembly (core/src/hashing/xxhash32.wat, 786 bytes): faster per
 * byte than the pure-JS pass, so long keys use it where the runtime allows (see key-hasher.ts).
 * Bit-identical to xxhash32.ts. In core rather than the xxhash-wasm package because a browser
 * bundle without code splitting inlines the whole package (~2.2 KB gzip, two passes per key).
 */
export class WasmXxh32 {
  private readonly memory: WasmXxh32Exports['memory']
  private readonly run: WasmXxh32Exports['pair']
  private readonly runMany: WasmXxh32Exports['many']
  private readonly encoder = new TextEncoder()
  /** The memory from byte {@link INPUT} on, and the two hashes; remade when the memory grows. */
  private input!: Uint8Array
  private out!: Int32Array
  /** The whole memory as words: a batch's lengths and hashes. */
  private words!: Int32Array

  /** Prefer {@link compileWasmXxh32}. */
  constructor(exports: WasmXxh32Exports) {
    this.memory = exports.memory
    this.run = exports.pair
    this.runMany = exports.many
    this.view()
  }

  /** XXH32 of `key`'s UTF-8 bytes with `seedA` into `pair[0]` and with `seedB` into `pair[1]`. */
  hashString(key: string, seedA: number, seedB: number, pair: Int32Array): void {
    this.reserve(key.length * 3)
    this.run(this.encoder.encodeInto(key, this.input).written, seedA, seedB)
    pair[0] = this.out[0]
    pair[1] = this.out[1]
  }

  /** As {@link hashString}, for raw bytes. */
  hashBytes(key: Uint8Array, seedA: number, seedB: number, pair: Int32Array): void {
    this.reserve(key.length)
    this.input.set(key)
    this.run(key.length, seedA, seedB)
    pair[0] = this.out[0]
    pair[1] = this.out[1]
  }

  /**
   * A batch in one call (issue 36): `joined` is `keys[from, from + count)` back to back, encoded by
   * one encodeInto; key i's hashes go to `pairs[2i]` (seedA) and `pairs[2i + 1]` (seedB). Returns
   * false, with `pairs` untouched, when `joined` is not ASCII: then a key's bytes need not start
   * where its chars do (and a lone surrogate at a key's end could pair with the next key's).
   */
  hashJoined(joined: string, keys: readonly string[], from: number, count: number, seedA: number, seedB: number, pairs: Int32Array): boolean {
    const length = joined.length
    // The lengths, then the hashes, after the most encodeInto may write (3 bytes per char), on a word.
    const lengthsAt = (INPUT + length * 3 + 3) >>> 2
    const outAt = lengthsAt + count
    this.reserve(length * 3 + 3 + 12 * count)
    if (this.encoder.encodeInto(joined, this.input).written !== length) return false
    const words = this.words
    for (let i = 0; i < count; i++) words[lengthsAt + i] = keys[from + i].length
    this.runMany(count, seedA, seedB, lengthsAt << 2, outAt << 2)
    for (let i = 0; i < 2 * count; i++) pairs[i] = words[outAt + i]
    return true
  }

  /** Grows the memory (rarely: it keeps the largest size seen) so that `length` input bytes fit. */
  private reserve(length: number): void {
    if (this.input.length >= length) return
    this.memory.grow(Math.ceil((INPUT + length - this.memory.buffer.byteLength) / PAGE))
    this.view()
  }

  private view(): void {
    this.input = new Uint8Array(this.memory.buffer, INPUT)
    this.out = new Int32Array(this.memory.buffer, 0, 2)
    this.words = new Int32Array(this.memory.buffer)
  }
}

/**
 * What the module exports, typed structurally so that core's declarations need no WebAssembly
 * types (an app's `lib` may lack them).
 */
export interface WasmXxh32Exports {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number }
  pair: (length: number, seedA: number, seedB: number) => void
  many: (count: number, seedA: number, seedB: number, lengthsAt: number, outAt: number) => void
}

/** Compiles the module. Rejects where WebAssembly is missing or forbidden (a CSP without 'wasm-unsafe-eval'). */
export async function compileWasmXxh32(): Promise<WasmXxh32> {
  const text = atob(XXH32_WASM_BASE64)
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i)
  const { instance } = await WebAssembly.instantiate(bytes)
  return new WasmXxh32(instance.exports as unknown as WasmXxh32Exports)
}
