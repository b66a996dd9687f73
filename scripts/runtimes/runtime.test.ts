import { createKeyHasher, KeyHasher } from '@bloomkit/core/store'
import { WASM_MIN_BYTE_LENGTH, WASM_MIN_STRING_LENGTH, wasmHashingSafe } from '@bloomkit/core/spec'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { expect, test } from 'vitest'
import { memberKeys, probeKeys } from '../../packages/memory-backend/test/support/fingerprint.js'

// Runs in the runtimes projects (projects.ts) only: BLOOMKIT_RUNTIME is the version the project names.
const expected = process.env.BLOOMKIT_RUNTIME
const line = Number(process.versions.node.split('.')[0])

test('this file runs on the Node the project names, not on the one running vitest', () => {
  expect(expected, 'BLOOMKIT_RUNTIME (set by the runtimes projects)').toMatch(/^\d+\.\d+\.\d+$/)
  expect(process.version).toBe(`v${expected}`)
})

test('from Node 22 on a filter hashes long keys in WebAssembly, with the hashes of the pure-JS pass', async () => {
  expect(wasmHashingSafe()).toBe(line >= 22)
  const seed = 0x5eed
  const filterHasher = await createKeyHasher(seed)
  expect(filterHasher.usesWasm).toBe(line >= 22)
  const pureJs = new KeyHasher(seed)
  const keys = [...memberKeys(), ...probeKeys()]
  const long = keys.filter((key) => key.length >= (typeof key === 'string' ? WASM_MIN_STRING_LENGTH : WASM_MIN_BYTE_LENGTH))
  expect(long.length).toBeGreaterThan(20)
  for (const key of keys) {
    filterHasher.hash(key)
    pureJs.hash(key)
    expect([filterHasher.a, filterHasher.b]).toEqual([pureJs.a, pureJs.b])
  }
  // And a filter built by create() answers through that hasher: no member is missed.
  const filter = await MemoryBloomFilter.create({ capacity: keys.length, errorRate: 0.001, seed })
  filter.addMany(long)
  expect(filter.hasMany(long).every(Boolean)).toBe(true)
})
