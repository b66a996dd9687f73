import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { BloomFilter, CountingBloomFilter } from '@bloomkit/core'
import { counterKernels, createKeyHasher, decodeSnapshot } from '@bloomkit/core/store'
import { ReferenceBitStore, ReferenceCounterStore } from '@bloomkit/core/testing'
import { countingFilterSuite } from '../../../test-support/counting-suite.js'

const { counterAt, plainBitsOf } = counterKernels

const spec = readFileSync(new URL('../../../docs/SPEC.md', import.meta.url), 'utf8')

function block(tag: string): string {
  const match = spec.match(new RegExp('```' + tag + '\\n([\\s\\S]*?)\\n```'))
  if (!match) throw new Error(`docs/SPEC.md has no \`\`\`${tag} block`)
  return match[1].trim()
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

async function counting(parameters: ConstructorParameters<typeof ReferenceCounterStore>[0]) {
  return new CountingBloomFilter(new ReferenceCounterStore(parameters), await createKeyHasher(parameters.seed))
}

describe('docs/SPEC.md section 10: counting filters', () => {
  test.each([
    ['hex counting snapshot', 'hex snapshot', { bits: 128, hashes: 3, shards: 2, seed: 7, layout: 'classic' as const, scheme: 1 as const }],
    ['hex counting snapshot remixed', 'hex snapshot remixed', { bits: 128, hashes: 3, shards: 2, seed: 7, layout: 'classic' as const, scheme: 3 as const }],
    ['hex counting snapshot blocked', 'hex snapshot blocked', { bits: 1024, hashes: 3, shards: 2, seed: 7, layout: 'blocked' as const, scheme: 2 as const }],
  ])('the `%s` vector is what a counting filter exports, and its plain export is `%s`', async (tag, plainTag, parameters) => {
    const filter = await counting(parameters)
    await filter.addMany(['alpha', 'beta', 'gamma', 'alpha'])
    expect(hex(await filter.export())).toBe(block(tag))
    expect(hex(await filter.exportPlain())).toBe(block(plainTag))
    const decoded = decodeSnapshot(Uint8Array.from(Buffer.from(block(tag), 'hex')), 'counting')
    expect(decoded).toMatchObject({ parameters, items: 3, counterBits: 4 })
    expect(decoded.payload.length).toBe(parameters.bits / 2)
  })

  test('the counter vectors: nibble order (high nibble for even positions) both ways, and their plain bits', () => {
    const vectors: { hex: string; counters: number[] }[] = JSON.parse(block('json counters'))
    expect(vectors.length).toBeGreaterThanOrEqual(4)
    for (const v of vectors) {
      const bytes = Uint8Array.from(Buffer.from(v.hex, 'hex'))
      expect(Array.from({ length: 8 }, (_, p) => counterAt(bytes, 0, p))).toEqual(v.counters)
      // An independent reading: counter p is bits 4p … 4p+3 from the most significant bit of byte 0.
      const bitString = [...bytes].map((b) => b.toString(2).padStart(8, '0')).join('')
      expect(Array.from({ length: 8 }, (_, p) => parseInt(bitString.slice(4 * p, 4 * p + 4), 2))).toEqual(v.counters)
      expect(plainBitsOf(bytes)[0]).toBe(v.counters.reduce((byte, c, p) => byte | (c !== 0 ? 0x80 >>> p : 0), 0))
    }
  })

  test('a plain reader refuses a counting snapshot and a counting reader a plain one, each naming the other import', () => {
    const countingBytes = Uint8Array.from(Buffer.from(block('hex counting snapshot'), 'hex'))
    const plainBytes = Uint8Array.from(Buffer.from(block('hex snapshot'), 'hex'))
    expect(() => decodeSnapshot(countingBytes)).toThrow(expect.objectContaining({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringMatching(/counting filter/) }))
    expect(() => decodeSnapshot(plainBytes, 'counting')).toThrow(expect.objectContaining({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringMatching(/plain filter/) }))
  })

  test('a counting snapshot with another counter width or flags set is refused', () => {
    const bytes = Uint8Array.from(Buffer.from(block('hex counting snapshot'), 'hex'))
    const mend = (edit: (b: Uint8Array) => void) => {
      const copy = bytes.slice()
      edit(copy)
      return copy
    }
    // The header CRC is checked first; these keep it wrong on purpose only where the check is the CRC.
    expect(() => decodeSnapshot(mend((b) => (b[32] = 8)), 'counting')).toThrow(expect.objectContaining({ code: 'BLOOM_CORRUPT_SNAPSHOT' }))
  })
})

countingFilterSuite({
  name: 'the reference counter store (async)',
  create: (parameters) => counting(parameters),
  createPlain: async (parameters) => new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed)),
  importCounting: async (snapshot) => {
    const { parameters, payload } = decodeSnapshot(snapshot, 'counting')
    const filter = await counting(parameters)
    ;(filter as unknown as { counters: ReferenceCounterStore }).counters.bytes.set(payload)
    return filter
  },
  runs: 60,
})
