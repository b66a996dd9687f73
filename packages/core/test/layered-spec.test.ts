import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { BloomError, BloomFilter, type FilterParameters } from '@bloomkit/core'
import { crc32, createKeyHasher, decodeSnapshot, layeredFormat, layerPolicies } from '@bloomkit/core/store'
import { ReferenceBitStore } from '@bloomkit/core/testing'

const { layerCapacity, layerErrorRate, layerParameters } = layerPolicies

const { decodeLayeredSnapshot, encodeLayeredSnapshot } = layeredFormat

const spec = readFileSync(new URL('../../../docs/SPEC.md', import.meta.url), 'utf8')
const block = (tag: string) => {
  const match = spec.match(new RegExp('```' + tag + '\\n([\\s\\S]*?)\\n```'))
  if (!match) throw new Error(`docs/SPEC.md has no \`\`\`${tag} block`)
  return match[1].trim()
}
const hex = (tag: string) => Uint8Array.from(Buffer.from(block(tag), 'hex'))
const code = (c: string) => expect.objectContaining({ code: c })

async function filterOf(parameters: FilterParameters, keys: string[]): Promise<BloomFilter> {
  const filter = new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed))
  await filter.addMany(keys)
  return filter
}

describe('docs/SPEC.md section 6: the items field', () => {
  const vectors: { bits: number; hashes: number; shards: number; setBits: number[]; items: number }[] = JSON.parse(block('json items'))

  test.each(vectors.map((v) => [JSON.stringify(v.setBits), v] as const))('set bits %s give the spec’s estimate (full shards included)', async (_, v) => {
    const parameters = { bits: v.bits, hashes: v.hashes, shards: v.shards, seed: 0, layout: 'classic' as const }
    const store = new ReferenceBitStore(parameters)
    v.setBits.forEach((count, shard) => {
      const bytes = new Uint8Array(v.bits / v.shards / 8)
      for (let i = 0; i < count; i++) bytes[i >> 3] |= 0x80 >>> (i & 7)
      store.writeShard(shard, 0, bytes)
    })
    const filter = new BloomFilter(store, await createKeyHasher(0))
    expect(await filter.estimateCount()).toBe(v.items)
    // The formula as section 6 writes it, read independently.
    const m = v.bits / v.shards
    const n = v.setBits.reduce((sum, x) => sum - (m / v.hashes) * Math.log(1 - Math.min(x, m - 0.5) / m), 0)
    expect(Math.floor(n + 0.5)).toBe(v.items)
  })

  test('a re-exported snapshot recomputes items rather than keeping the hint it read', async () => {
    const original = hex('hex snapshot')
    const tampered = original.slice()
    const view = new DataView(tampered.buffer)
    view.setUint32(24, 99, true)
    view.setUint32(36, crc32(tampered.subarray(0, 36)), true)
    const decoded = decodeSnapshot(tampered)
    expect(decoded.items).toBe(99)
    const store = new ReferenceBitStore(decoded.parameters)
    const shardBytes = decoded.parameters.bits / decoded.parameters.shards / 8
    for (let s = 0; s < decoded.parameters.shards; s++) store.writeShard(s, 0, decoded.payload.subarray(s * shardBytes, (s + 1) * shardBytes))
    const filter = new BloomFilter(store, await createKeyHasher(decoded.parameters.seed))
    expect(Buffer.from(await filter.export()).toString('hex')).toBe(block('hex snapshot'))
  })
})

describe('docs/SPEC.md section 8: layered snapshots', () => {
  test('the scalable vector: header fields at the spec’s offsets, layers sized by the spec’s rule, bits of a plain filter per layer', async () => {
    const bytes = hex('hex layered scalable')
    const view = new DataView(bytes.buffer)
    // Section 8.1 read literally.
    expect([view.getUint16(4, true), view.getUint8(6), view.getUint8(7), view.getUint32(8, true), view.getUint32(12, true)]).toEqual([2, 1, 3, 7, 0])
    expect([view.getUint32(16, true), view.getFloat64(24, true), view.getUint32(32, true), view.getFloat64(40, true)]).toEqual([2, 0.1, 2, 0.5])
    expect([view.getUint32(48, true), view.getUint32(52, true), view.getUint32(56, true), view.getUint32(60, true)]).toEqual([0, 0, 2, 0])
    expect(view.getUint32(36, true)).toBe(crc32(bytes.subarray(0, 36)))
    expect(view.getUint32(64, true)).toBe(crc32(bytes.subarray(0, 64)))

    const { policy, layers } = decodeLayeredSnapshot(bytes)
    expect(policy).toMatchObject({ kind: 'scalable', capacity: 2, errorRate: 0.1, growth: 2, tightening: 0.5, seed: 7, layout: 'classic' })
    expect(layers.map((layer) => [layer.window, layer.count])).toEqual([
      [0, 2],
      [0, 3],
    ])
    expect([layerCapacity(policy, 0), layerCapacity(policy, 1)]).toEqual([2, 4])
    expect([layerErrorRate(policy, 0), layerErrorRate(policy, 1)]).toEqual([0.05, 0.025])
    const keys = [['alpha', 'beta'], ['gamma', 'delta', 'epsilon']]
    const filters = await Promise.all(layers.map((layer, i) => filterOf(layer.parameters, keys[i])))
    expect(layers.map((layer) => [layer.parameters.bits, layer.parameters.hashes])).toEqual([
      [16, 4],
      [32, 5],
    ])
    // Sized by the earlier rule (SPEC section 1); this release's rule gives the same hashes and
    // layer 0, and a larger layer 1 (the textbook rate of 32 bits sat above p_1 by the exact one).
    expect(layerParameters(policy, 0)).toEqual(layers[0].parameters)
    expect(layerParameters(policy, 1)).toEqual({ ...layers[1].parameters, bits: 40 })
    const snapshots = await Promise.all(filters.map((filter) => filter.export()))
    const rebuilt = encodeLayeredSnapshot(policy, layers.map((layer, i) => ({ window: layer.window, count: layer.count, snapshot: snapshots[i] })))
    expect(Buffer.from(rebuilt).toString('hex')).toBe(block('hex layered scalable'))
  })

  test('the scalable vector of an earlier release (scheme-1 layers) reads, its keys answer as before, and a new layer is scheme 3', async () => {
    const { policy, layers } = decodeLayeredSnapshot(hex('hex layered scalable scheme 1'))
    expect(policy).toMatchObject({ kind: 'scalable', capacity: 2, errorRate: 0.1, growth: 2, seed: 7, layout: 'classic' })
    expect(layers.map((layer) => layer.parameters.scheme)).toEqual([1, 1])
    const keys = [['alpha', 'beta'], ['gamma', 'delta', 'epsilon']]
    for (const [i, layer] of layers.entries()) {
      // The same bits as a scheme-1 filter that took the same keys: nothing about the old layer moved.
      const filter = await filterOf(layer.parameters, keys[i])
      expect(Buffer.from((await filter.export()).subarray(40, -4))).toEqual(Buffer.from(layer.payload))
    }
    expect(layerParameters(policy, 2).scheme).toBe(3)
  })

  test('the rotating vector: windows 2 and 3 of 60 s, keep 2, no growth', async () => {
    const { policy, layers } = decodeLayeredSnapshot(hex('hex layered rotating'))
    expect(policy).toMatchObject({ kind: 'rotating', capacity: 4, errorRate: 0.1, growth: 0, seconds: 60, keep: 2, seed: 7, layout: 'blocked' })
    expect(layers.map((layer) => [layer.window, layer.count])).toEqual([
      [2, 2],
      [3, 1],
    ])
    expect(layerErrorRate(policy, 0)).toBe(0.05)
    const keys = [['alpha', 'beta'], ['gamma']]
    const snapshots = await Promise.all(layers.map(async (layer, i) => (await filterOf(layerParameters(policy, 0), keys[i])).export()))
    const rebuilt = encodeLayeredSnapshot(policy, layers.map((layer, i) => ({ window: layer.window, count: layer.count, snapshot: snapshots[i] })))
    expect(Buffer.from(rebuilt).toString('hex')).toBe(block('hex layered rotating'))
  })

  test.each(['hex layered scalable', 'hex layered rotating'])('a version-1 reader refuses the `%s` vector with BLOOM_UNSUPPORTED_VERSION', (tag) => {
    expect(() => decodeSnapshot(hex(tag))).toThrowError(code('BLOOM_UNSUPPORTED_VERSION'))
  })

  test('a layered snapshot with an unknown policy (byte 6, CRCs mended) is refused with BLOOM_UNSUPPORTED_VERSION', () => {
    for (const policy of [0, 3, 255]) {
      const bytes = hex('hex layered scalable')
      const view = new DataView(bytes.buffer)
      bytes[6] = policy
      view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
      view.setUint32(64, crc32(bytes.subarray(0, 64)), true)
      expect(() => decodeLayeredSnapshot(bytes), `policy ${policy}`).toThrowError(code('BLOOM_UNSUPPORTED_VERSION'))
    }
  })

  test('a version-2 reader refuses a version-1 snapshot with BLOOM_UNSUPPORTED_VERSION', () => {
    expect(() => decodeLayeredSnapshot(hex('hex snapshot'))).toThrowError(code('BLOOM_UNSUPPORTED_VERSION'))
  })

  test('every changed byte of a layered snapshot is refused, never read as another filter', () => {
    const bytes = hex('hex layered scalable')
    for (let at = 0; at < bytes.length; at++) {
      const bad = bytes.slice()
      bad[at] ^= 0x10
      let thrown: unknown
      try {
        decodeLayeredSnapshot(bad)
      } catch (error) {
        thrown = error
      }
      expect(thrown, `byte ${at}`).toBeInstanceOf(BloomError)
      expect(['BLOOM_CORRUPT_SNAPSHOT', 'BLOOM_UNSUPPORTED_VERSION'], `byte ${at}`).toContain((thrown as BloomError).code)
    }
    expect(() => decodeLayeredSnapshot(bytes.subarray(0, bytes.length - 1))).toThrowError(code('BLOOM_CORRUPT_SNAPSHOT'))
  })
})
