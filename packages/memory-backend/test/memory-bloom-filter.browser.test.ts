import { describe, expect, inject, test } from 'vitest'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { fingerprint, fromHex, memberKeys, probeKeys, violations } from './support/fingerprint.js'

const node = inject('nodeFingerprint')

describe('MemoryBloomFilter in Chromium', () => {
  test('runs in a real browser, with core’s WebAssembly hash loaded', async () => {
    // Guards against the project silently running in Node (where the comparison would be vacuous).
    expect(navigator.userAgent).toMatch(/Chrome\//)
    expect((globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node).toBeUndefined()
    expect((await fingerprint()).usesWasm).toBe(true)
  })

  test('answers exactly as in Node: hashes, add/has answers, estimate and snapshot bytes', async () => {
    // Here long keys go through core's WebAssembly XXH32; in Node 20 through the pure-JS pass (see core's
    // wasmHashingSafe), so this also holds the two paths to the same answers.
    const { usesWasm, ...browser } = await fingerprint()
    const { usesWasm: nodeUsesWasm, ...inNode } = node
    expect([usesWasm, typeof nodeUsesWasm]).toEqual([true, 'boolean'])
    expect(violations({ usesWasm, ...browser })).toEqual([])
    expect(browser).toEqual(inNode)
  })

  test('imports the snapshot exported in Node and answers as the Node filter did', async () => {
    const members = memberKeys()
    const probes = probeKeys()
    for (const expected of node.filters) {
      const filter = await MemoryBloomFilter.import(fromHex(expected.snapshot))
      expect(filter.hasMany(members).every(Boolean)).toBe(true)
      expect(filter.hasMany(probes).map((answer) => (answer ? '1' : '0')).join('')).toBe(expected.probes)
    }
  })
})
