import { expect, test } from 'vitest'
import { bitfieldCommand } from '../src/bits/bitfield-command.js'

const encoded = (command: ReturnType<typeof bitfieldCommand>) => (command.toWritable(undefined as never) as Buffer).toString('latin1')

test('encodes BITFIELD with the marker read first and SET u1 per position, in key order', () => {
  const positions = Uint32Array.of(5, 6, 70, 80)
  const command = encoded(bitfieldCommand('f:0:{a}', { op: 'add', markerOffset: 1024, positions, hashes: 2, keys: Uint32Array.of(1, 0), from: 0, to: 2 }))
  expect(command).toBe(
    '*21\r\n$8\r\nbitfield\r\n$7\r\nf:0:{a}\r\n$3\r\nGET\r\n$3\r\nu32\r\n$4\r\n1024\r\n' +
      '$3\r\nSET\r\n$2\r\nu1\r\n$2\r\n70\r\n$1\r\n1\r\n$3\r\nSET\r\n$2\r\nu1\r\n$2\r\n80\r\n$1\r\n1\r\n' +
      '$3\r\nSET\r\n$2\r\nu1\r\n$1\r\n5\r\n$1\r\n1\r\n$3\r\nSET\r\n$2\r\nu1\r\n$1\r\n6\r\n$1\r\n1\r\n',
  )
})

test('encodes BITFIELD_RO with GET u1 and every digit count from 1 to 10', () => {
  // Digits go in groups of four from the right: group edges and zeros inside a number too.
  const values = [0, 7, 10, 99, 100, 999, 1000, 9_999, 10_000, 10_001, 65_535, 100_000, 1_234_567, 99_999_999, 100_000_000, 100_010_001, 999_999_999, 1_000_000_000, 4_294_967_295]
  const command = encoded(bitfieldCommand('k', { op: 'has', markerOffset: 8, positions: Uint32Array.from(values), hashes: 1, keys: Uint32Array.from(values.map((_, i) => i)), from: 0, to: values.length }))
  const parts = command.split('\r\n')
  expect(parts[0]).toBe(`*${2 + 3 + 3 * values.length}`)
  expect(parts[2]).toBe('bitfield_ro')
  const written: string[] = []
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === 'u1') {
      expect(parts[i + 1]).toBe(`$${parts[i + 2].length}`)
      written.push(parts[i + 2])
    }
  }
  expect(written).toEqual(values.map(String))
})

test('a range of keys (from, to) encodes only those keys', () => {
  const command = encoded(bitfieldCommand('k', { op: 'has', markerOffset: 8, positions: Uint32Array.of(1, 2, 3), hashes: 1, keys: Uint32Array.of(0, 1, 2), from: 1, to: 2 }))
  expect(command.endsWith('$3\r\nGET\r\n$2\r\nu1\r\n$1\r\n2\r\n')).toBe(true)
  expect(command.startsWith('*8\r\n')).toBe(true)
})
