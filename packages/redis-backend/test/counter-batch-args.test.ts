import { expect, test } from 'vitest'
import { packInts, sortedByByte } from '../src/counting/counter-batch-args.js'

/** A fixed xorshift32 stream: the same values every run. */
function stream(seed: number): () => number {
  let state = seed
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return state >>> 0
  }
}

test.each([
  ['one pass (bytes under 2^11)', 2 ** 11],
  ['two passes (a shard under 4 MiB)', 2 ** 22],
  ['three passes (bytes up to 2^32 − 1)', 2 ** 32],
])('sortedByByte orders by byte, equal bytes in index order, as a stable sort does: %s', (_, span) => {
  const next = stream(7)
  // Few distinct values as well as many, so that ties occur.
  for (const distinct of [5, 3000]) {
    const values = Array.from({ length: distinct }, () => Math.floor((next() / 2 ** 32) * span))
    const bytes = Uint32Array.from({ length: 4000 }, () => values[next() % distinct])
    const expected = Array.from(bytes.keys()).sort((a, b) => bytes[a] - bytes[b] || a - b)
    expect(Array.from(sortedByByte(bytes))).toEqual(expected)
  }
  expect(Array.from(sortedByByte(new Uint32Array(0)))).toEqual([])
})

test('packInts writes each integer in MessagePack\'s shortest form, negative ones too', () => {
  const values = [0, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, -1, -32, -33, -32768, -32769, -(2 ** 31)]
  expect(packInts(values).toString('hex')).toBe(
    [
      '9e', // fixarray of 14
      '00', '7f', 'cc80', 'ccff', 'cd0100', 'cdffff', 'ce00010000', 'ceffffffff',
      'ff', 'e0', 'd1ffdf', 'd18000', 'd2ffff7fff', 'd280000000',
    ].join(''),
  )
  // Array headers: 16 items take `dc` and a 16-bit count.
  expect(packInts(new Array<number>(16).fill(1)).subarray(0, 3).toString('hex')).toBe('dc0010')
})
