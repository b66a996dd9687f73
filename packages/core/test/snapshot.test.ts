import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { describe, expect, test } from 'vitest'
import { BloomFilter, type FilterParameters } from '@bloomkit/core'
import { crc32, createKeyHasher, decodeSnapshot, snapshotFormat, SnapshotReader } from '@bloomkit/core/store'
import { snapshotBytes } from '../src/format/snapshot.js'
import { ReferenceBitStore } from '@bloomkit/core/testing'

const { decodeSnapshotHeader, encodeSnapshotHeader, SNAPSHOT_HEADER_BYTES } = snapshotFormat

const parameters: FilterParameters = { bits: 3 * 256, hashes: 4, shards: 3, seed: 99, layout: 'classic', scheme: 3 }

async function filledSnapshot(keys: string[]): Promise<Uint8Array> {
  const filter = new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed))
  await filter.addMany(keys)
  return filter.export()
}

const corrupt = expect.objectContaining({ code: 'BLOOM_CORRUPT_SNAPSHOT' })

/** Rewrites the header CRC after editing header bytes, so the edit itself is what gets checked. */
function withHeaderEdit(snapshot: Uint8Array, edit: (view: DataView) => void): Uint8Array {
  const copy = snapshot.slice()
  const view = new DataView(copy.buffer)
  edit(view)
  view.setUint32(36, crc32(copy.subarray(0, 36)), true)
  return copy
}

describe('snapshot format', () => {
  test('CRC-32 is zlib’s', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926)
    expect(crc32(new Uint8Array(0))).toBe(0)
  })

  test('header fields round-trip, and the layout is the one in docs/SPEC.md', () => {
    const header = encodeSnapshotHeader({ parameters: { bits: 2 ** 40, hashes: 7, shards: 256, seed: 0xdeadbeef, layout: 'blocked', scheme: 2 }, items: 2 ** 45 + 3 })
    expect(header.length).toBe(SNAPSHOT_HEADER_BYTES)
    expect(new TextDecoder().decode(header.subarray(0, 4))).toBe('BLMK')
    const view = new DataView(header.buffer)
    expect([view.getUint16(4, true), view.getUint8(6), view.getUint8(7), view.getUint32(8, true), view.getUint32(12, true)]).toEqual([1, 2, 7, 0xdeadbeef, 256])
    expect(view.getUint32(16, true) + view.getUint32(20, true) * 2 ** 32).toBe(2 ** 40)
    expect(decodeSnapshotHeader(header)).toEqual({ parameters: { bits: 2 ** 40, hashes: 7, shards: 256, seed: 0xdeadbeef, layout: 'blocked', scheme: 2 }, items: 2 ** 45 + 3 })
  })

  test('a whole snapshot decodes to its parameters and payload', async () => {
    const snapshot = await filledSnapshot(['a', 'b', 'c'])
    expect(snapshot.length).toBe(snapshotBytes(parameters))
    const decoded = decodeSnapshot(snapshot)
    expect(decoded.parameters).toEqual(parameters)
    expect(decoded.items).toBe(3)
    expect(decoded.payload.length).toBe(parameters.bits / 8)
  })

  prop([fc.array(fc.string(), { maxLength: 50 }), fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 20 })])(
    'SnapshotReader, fed in any chunking, yields the same payload and verifies it',
    async (keys, cuts) => {
      const snapshot = await filledSnapshot(keys)
      const reader = new SnapshotReader()
      const payload = new Uint8Array(parameters.bits / 8)
      const shardBytes = parameters.bits / parameters.shards / 8
      let at = 0
      let i = 0
      while (at < snapshot.length) {
        const end = Math.min(snapshot.length, at + cuts[i++ % cuts.length])
        for (const chunk of reader.push(snapshot.subarray(at, end))) payload.set(chunk.bytes, chunk.shard * shardBytes + chunk.offset)
        at = end
      }
      expect(reader.finish().parameters).toEqual(parameters)
      expect(payload).toEqual(decodeSnapshot(snapshot).payload)
    },
  )

  test('every truncation is refused, in whole and streamed', async () => {
    const snapshot = await filledSnapshot(['x', 'y'])
    for (let length = 0; length < snapshot.length; length++) {
      const cut = snapshot.subarray(0, length)
      expect(() => decodeSnapshot(cut)).toThrowError(corrupt)
      expect(() => {
        const reader = new SnapshotReader()
        reader.push(cut)
        reader.finish()
      }).toThrowError(corrupt)
    }
  })

  test('trailing bytes are refused', async () => {
    const snapshot = await filledSnapshot(['x'])
    const longer = new Uint8Array(snapshot.length + 1)
    longer.set(snapshot)
    expect(() => decodeSnapshot(longer)).toThrowError(corrupt)
    expect(() => new SnapshotReader().push(longer)).toThrowError(corrupt)
  })

  test('any single flipped bit anywhere is caught', async () => {
    const snapshot = await filledSnapshot(['x', 'y', 'z'])
    for (let byte = 0; byte < snapshot.length; byte++) {
      for (const bit of [0, 3, 7]) {
        const copy = snapshot.slice()
        copy[byte] ^= 1 << bit
        expect(() => decodeSnapshot(copy), `byte ${byte} bit ${bit}`).toThrow(/snapshot/)
      }
    }
  })

  test('a later format version or an unknown hash scheme is BLOOM_UNSUPPORTED_VERSION', async () => {
    const snapshot = await filledSnapshot(['x'])
    const unsupported = expect.objectContaining({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringMatching(/version 2|scheme 9/) })
    expect(() => decodeSnapshot(withHeaderEdit(snapshot, (v) => v.setUint16(4, 2, true)))).toThrowError(unsupported)
    expect(() => decodeSnapshot(withHeaderEdit(snapshot, (v) => v.setUint8(6, 9)))).toThrowError(unsupported)
  })

  test.each([
    ['zero hashes', (v: DataView) => v.setUint8(7, 0)],
    ['65 hashes', (v: DataView) => v.setUint8(7, 65)],
    ['zero shards', (v: DataView) => v.setUint32(12, 0, true)],
    ['bits not a multiple of shards × 8', (v: DataView) => v.setUint32(16, 3 * 256 + 8, true)],
    ['unknown flags', (v: DataView) => v.setUint32(32, 1, true)],
    ['the blocked scheme with shards of 256 bits (not whole 512-bit blocks)', (v: DataView) => v.setUint8(6, 2)],
  ])('impossible header fields (%s) are BLOOM_CORRUPT_SNAPSHOT', async (_, edit) => {
    const snapshot = await filledSnapshot(['x'])
    expect(() => decodeSnapshot(withHeaderEdit(snapshot, edit))).toThrowError(corrupt)
  })

  test('not a Uint8Array is refused by name', () => {
    expect(() => decodeSnapshot('BLMK' as never)).toThrowError(expect.objectContaining({ code: 'BLOOM_INVALID_PARAMETER', message: expect.stringContaining('snapshot') }))
  })
})
