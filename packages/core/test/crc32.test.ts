import { expect, test } from 'vitest'
import { crc32 } from '@bloomkit/core/store'

/** The textbook bit-at-a-time CRC-32, as the reference for the sliced one. */
function bitwiseCrc32(bytes: Uint8Array): number {
  let c = ~0
  for (const byte of bytes) {
    c ^= byte
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  }
  return ~c >>> 0
}

test('crc32 gives the reference values for every length and alignment, and continues across pieces', () => {
  const bytes = Uint8Array.from({ length: 301 }, (_, i) => (i * 131 + 7) & 0xff)
  for (let start = 0; start < 4; start++) {
    for (let length = 0; length + start <= bytes.length; length += 13) {
      const piece = bytes.subarray(start, start + length)
      expect(crc32(piece)).toBe(bitwiseCrc32(piece))
    }
  }
  expect(crc32(bytes.subarray(150), crc32(bytes.subarray(0, 150)))).toBe(bitwiseCrc32(bytes))
  expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926)
})
