// Writing RESP into a buffer a few bytes per store: a batch's commands are tens of bytes per bit
// or key, and byte-by-byte stores (or a native copy per piece) cost ~1 ns a byte; 32-bit stores of
// prepared words and four-digit groups write a BITFIELD operation ~3x faster.

/** Room a writer may need past the last byte it reports: stores are 4 bytes wide. */
export const SLACK_BYTES = 8

/** Fixed bytes (a command's head, a key as a bulk string) as little-endian 32-bit words. */
export class Bytes {
  readonly length: number
  private readonly words: Uint32Array

  constructor(bytes: Uint8Array | string) {
    const data = typeof bytes === 'string' ? Buffer.from(bytes) : bytes
    this.length = data.length
    this.words = new Uint32Array(Math.ceil(data.length / 4))
    for (let i = 0; i < data.length; i++) this.words[i >>> 2] |= data[i] << (8 * (i & 3))
  }

  /** Writes the bytes at `at` (and up to 3 bytes of zeros after them); returns the end. */
  put(view: DataView, at: number): number {
    const words = this.words
    for (let i = 0; i < words.length; i++) view.setUint32(at + 4 * i, words[i], true)
    return at + this.length
  }
}

/** `MULTI` and `EXEC`, as a batch connection writes them around a transaction. */
export const MULTI = new Bytes('*1\r\n$5\r\nMULTI\r\n')
export const EXEC = new Bytes('*1\r\n$4\r\nEXEC\r\n')

/** "0000" … "9999" as little-endian 32-bit words. */
const QUADS = (() => {
  const quads = new Uint32Array(10_000)
  for (let i = 0; i < 10_000; i++) {
    const d = [Math.floor(i / 1000), Math.floor(i / 100) % 10, Math.floor(i / 10) % 10, i % 10]
    quads[i] = (0x30 + d[0]) | ((0x30 + d[1]) << 8) | ((0x30 + d[2]) << 16) | ((0x30 + d[3]) << 24)
  }
  return quads
})()

function digitsOf(value: number): number {
  if (value < 1e4) return value < 10 ? 1 : value < 100 ? 2 : value < 1e3 ? 3 : 4
  if (value < 1e8) return value < 1e5 ? 5 : value < 1e6 ? 6 : value < 1e7 ? 7 : 8
  return value < 1e9 ? 9 : 10
}

/**
 * Writes `value` (an unsigned 32-bit integer) as a RESP bulk string, `$<digits>\r\n<value>\r\n`,
 * at `at` (`view` and `buffer` over the same bytes); returns the end.
 */
export function putBulkNumber(view: DataView, buffer: Uint8Array, at: number, value: number): number {
  const digits = digitsOf(value)
  if (digits === 10) {
    view.setUint32(at, 0x0d303124, true) // "$10\r"
    buffer[at + 4] = 0x0a
    at += 5
  } else {
    view.setUint32(at, 0x24 | ((0x30 + digits) << 8) | 0x0a0d0000, true) // "$<d>\r\n"
    at += 4
  }
  let i = at + digits
  while (value >= 10_000) {
    const next = Math.floor(value / 10_000)
    i -= 4
    view.setUint32(i, QUADS[value - next * 10_000], true)
    value = next
  }
  // The most significant group: `i − at` digits, the last ones of its quad.
  let word = QUADS[value] >>> (8 * (4 - (i - at)))
  for (let j = at; j < i; j++, word >>>= 8) buffer[j] = word & 0xff
  at += digits
  view.setUint16(at, 0x0a0d, true)
  return at + 2
}

/** A DataView over `buffer`'s bytes. */
export function viewOf(buffer: Uint8Array): DataView {
  return new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
}

/** `text` as the RESP of a bulk string: `$<bytes>\r\n<text>\r\n`. */
export function bulkText(text: string): string {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`
}

/** `key` as a RESP bulk string, ready to write: {@link bulkText} as {@link Bytes}. */
export function bulkString(key: string): Bytes {
  return new Bytes(bulkText(key))
}
