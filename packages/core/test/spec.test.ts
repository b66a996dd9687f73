import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import xxhash from 'xxhash-wasm'
import { BloomFilter, type BitLayout, type HashScheme } from '@bloomkit/core'
import { createKeyHasher, decodeSnapshot, KeyHasher } from '@bloomkit/core/store'
import { positionsOf, shardOf } from '@bloomkit/core/spec'
import { ReferenceBitStore } from '@bloomkit/core/testing'

const spec = readFileSync(new URL('../../../docs/SPEC.md', import.meta.url), 'utf8')

function block(tag: string): string {
  const match = spec.match(new RegExp('```' + tag + '\\n([\\s\\S]*?)\\n```'))
  if (!match) throw new Error(`docs/SPEC.md has no \`\`\`${tag} block`)
  return match[1]
}

interface Vector {
  key?: string
  keyHex?: string
  seed: number
  bits: number
  hashes: number
  shards: number
  layout?: BitLayout
  /** Absent: 1 for a classic vector, 2 for a blocked one (the vectors written before scheme 3). */
  scheme?: HashScheme
  a: number
  b: number
  shard: number
  positions: number[]
}

const vectors: Vector[] = JSON.parse(block('json vectors'))
const schemeOfVector = (v: Vector): HashScheme => v.scheme ?? (v.layout === 'blocked' ? 2 : 1)
const keyOf = (v: Vector) => (v.keyHex === undefined ? v.key! : Uint8Array.from(Buffer.from(v.keyHex, 'hex')))
const wasm = await xxhash()

/** Section 4.2 read literally, in BigInt. */
function blockedPositions(a: bigint, b: bigint, shardBits: bigint, k: number): number[] {
  const start = ((a * (shardBits / 512n)) >> 32n) * 512n
  const out: number[] = []
  let h = b
  for (let i = 0; i < k; i++) {
    out.push(Number(start + (h >> 23n)))
    h = (h * 0x9e3779b9n) % 2n ** 32n
  }
  return out
}

/** MurmurHash3's fmix32 (section 4.3) read literally, in BigInt. */
function fmix32(h: bigint): bigint {
  const M = 2n ** 32n
  h ^= h >> 16n
  h = (h * 0x85ebca6bn) % M
  h ^= h >> 13n
  h = (h * 0xc2b2ae35n) % M
  return h ^ (h >> 16n)
}

describe('docs/SPEC.md test vectors', () => {
  test.each([1, 2, 3] as const)('there are scheme %s vectors for text, binary, many shards and a 2^32-bit shard', (scheme) => {
    const ofLayout = vectors.filter((v) => schemeOfVector(v) === scheme)
    expect(ofLayout.length).toBeGreaterThanOrEqual(7)
    expect(ofLayout.some((v) => v.keyHex !== undefined)).toBe(true)
    expect(ofLayout.some((v) => v.shards >= 1024)).toBe(true)
    expect(ofLayout.some((v) => v.bits / v.shards === 2 ** 32)).toBe(true)
  })

  test.each(vectors.map((v) => [JSON.stringify(v.key ?? v.keyHex).slice(0, 30), v] as const))('%s: the implementation gives the spec’s hashes, shard and positions', (_, v) => {
    const hasher = new KeyHasher(v.seed)
    hasher.hash(keyOf(v))
    const positions = new Uint32Array(v.hashes)
    positionsOf(schemeOfVector(v))(hasher.a, hasher.b, v.bits / v.shards, v.hashes, positions, 0)
    expect({ a: hasher.a, b: hasher.b, shard: shardOf(hasher.a, hasher.b, v.shards), positions: Array.from(positions) }).toEqual({
      a: v.a,
      b: v.b,
      shard: v.shard,
      positions: v.positions,
    })
  })

  test.each(vectors.map((v) => [JSON.stringify(v.key ?? v.keyHex).slice(0, 30), v] as const))('%s: an independent reading of the spec (xxhash-wasm, BigInt) agrees', (_, v) => {
    const bytes = typeof keyOf(v) === 'string' ? new TextEncoder().encode(keyOf(v) as string) : (keyOf(v) as Uint8Array)
    const a = wasm.h32Raw(bytes, v.seed)
    const b = wasm.h32Raw(bytes, (v.seed ^ 0x9e3779b9) >>> 0)
    const m = BigInt(v.bits / v.shards)
    const positions =
      v.layout === 'blocked'
        ? blockedPositions(BigInt(a), BigInt(b), m, v.hashes)
        : Array.from({ length: v.hashes }, (_, i) => {
            const n = BigInt(i)
            const h = (BigInt(a) + n * BigInt(b) + (n ** 3n - n) / 6n) % 2n ** 32n
            return Number(((schemeOfVector(v) === 3 ? fmix32(h) : h) * m) >> 32n)
          })
    expect({ a, b, positions }).toEqual({ a: v.a, b: v.b, positions: v.positions })
  })

  test.each([
    ['hex snapshot', { bits: 128, hashes: 3, shards: 2, seed: 7, layout: 'classic' as const, scheme: 1 as const }],
    ['hex snapshot remixed', { bits: 128, hashes: 3, shards: 2, seed: 7, layout: 'classic' as const, scheme: 3 as const }],
    ['hex snapshot blocked', { bits: 1024, hashes: 3, shards: 2, seed: 7, layout: 'blocked' as const, scheme: 2 as const }],
  ])('the `%s` vector is what a filter exports, and decodes to its parameters', async (tag, parameters) => {
    const filter = new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed))
    await filter.addMany(['alpha', 'beta', 'gamma'])
    const expected = block(tag).trim()
    expect(Buffer.from(await filter.export()).toString('hex')).toBe(expected)
    const decoded = decodeSnapshot(Uint8Array.from(Buffer.from(expected, 'hex')))
    expect(decoded.parameters).toEqual(parameters)
    expect(decoded.items).toBe(3)
  })
})
