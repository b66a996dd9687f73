import { expect, test } from 'vitest'
import { crc32 } from '@bloomkit/core'
import { checksum } from './checksum.js'

test('checksum gives core crc32 values for every length and alignment, and continues across pieces', () => {
  const bytes = Uint8Array.from({ length: 301 }, (_, i) => (i * 131 + 7) & 0xff)
  for (let start = 0; start < 4; start++) {
    for (let length = 0; length + start <= bytes.length; length += 13) {
      const piece = bytes.subarray(start, start + length)
      expect(checksum(piece)).toBe(crc32(piece))
    }
  }
  expect(checksum(bytes.subarray(150), checksum(bytes.subarray(0, 150)))).toBe(crc32(bytes))
  expect(checksum(new TextEncoder().encode('123456789'))).toBe(0xcbf43926)
})
