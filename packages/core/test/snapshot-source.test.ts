import { describe, expect, test } from 'vitest'
import { BloomFilter, sizeFilter } from '@bloomkit/core'
import { createKeyHasher, snapshotSources } from '@bloomkit/core/store'
import { ReferenceBitStore } from '@bloomkit/core/testing'

const { peekKind, snapshotReader, wholeSnapshot } = snapshotSources

/** A fixed filter's snapshot with its format version (bytes 4–5) set to `version`: all peekKind reads is the header's start. */
async function snapshotOfVersion(version: number): Promise<Uint8Array> {
  const parameters = sizeFilter({ capacity: 100, errorRate: 0.01, seed: 7 })
  const filter = new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed))
  await filter.add('a')
  const bytes = await filter.export()
  new DataView(bytes.buffer, bytes.byteOffset).setUint16(4, version, true)
  return bytes
}

/** `bytes` as a stream of 3-byte chunks (the version then spans chunks). */
async function* inChunks(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += 3) yield bytes.subarray(at, at + 3)
}

describe('peekKind: the kind a snapshot holds, told before an import writes anything', () => {
  test.each([
    [1, 'fixed'],
    [2, 'layered'],
    [3, 'counting'],
    [9, 'fixed'],
  ] as const)('version %i is %s, whole or in chunks, and the source gives every byte again', async (version, kind) => {
    const bytes = await snapshotOfVersion(version)
    for (const snapshot of [bytes, inChunks(bytes)]) {
      const peeked = await peekKind(snapshot, undefined)
      expect(peeked.kind).toBe(kind)
      expect(Buffer.from(await wholeSnapshot(peeked.source)).equals(Buffer.from(bytes))).toBe(true)
    }
  })

  test('asking for another kind is BLOOM_INCOMPATIBLE naming both; an unreadable start is left to the importer', async () => {
    await expect(peekKind(await snapshotOfVersion(2), 'fixed')).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining("layered filter's (format version 2), not a fixed one") })
    await expect(peekKind(inChunks(await snapshotOfVersion(1)), 'counting')).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE', message: expect.stringContaining("fixed filter's (format version 1), not a counting one") })
    expect((await peekKind(await snapshotOfVersion(3), 'counting')).kind).toBe('counting')
    expect((await peekKind(new Uint8Array([1, 2, 3]), 'layered')).kind).toBe('fixed')
  })
})

describe('snapshotReader: a whole snapshot is held to its header before any payload is handed out', () => {
  test('a header describing more (or fewer) bytes than a whole snapshot holds is refused at the header; a stream is checked as it arrives', async () => {
    const parameters = sizeFilter({ capacity: 100, errorRate: 0.01, seed: 7 })
    const bytes = await new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed)).export()
    for (const wrong of [bytes.subarray(0, 100), Uint8Array.from([...bytes, 0])]) {
      // The first push holds the header: it already throws, naming both lengths.
      expect(() => snapshotReader(wrong).push(wrong.subarray(0, 40))).toThrow(
        expect.objectContaining({ code: 'BLOOM_CORRUPT_SNAPSHOT', message: expect.stringContaining(`is ${wrong.length} bytes; its header describes ${bytes.length}`) }),
      )
    }
    // Streamed, only the end can tell.
    const streamed = snapshotReader(inChunks(bytes.subarray(0, 100)))
    expect(streamed.push(bytes.subarray(0, 100)).length).toBeGreaterThan(0)
    expect(() => streamed.finish()).toThrow(expect.objectContaining({ code: 'BLOOM_CORRUPT_SNAPSHOT' }))
    // Right length: every payload byte comes out, and finish passes.
    const reader = snapshotReader(bytes)
    expect(reader.push(bytes).reduce((n, piece) => n + piece.bytes.length, 0)).toBe(bytes.length - 44)
    expect(reader.finish().parameters).toEqual(parameters)
  })
})
