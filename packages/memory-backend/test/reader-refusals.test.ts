import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { isBloomError } from '@bloomkit/core'
import { crc32 } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { openLayeredSnapshot, openSnapshot } from '@bloomkit/memory-backend/reader'
import { prop } from '../../../test-support/property-test.js'
import { GOLDEN_NOW, goldenKeys, goldenProbes } from '../../../test-support/golden-snapshots.js'

// A damaged snapshot: the reader refuses whatever the full filter's import refuses, with the same
// code, and never answers from it (issue 37). A snapshot both accept gets the same answers.

const clock = () => GOLDEN_NOW + 120_000
const keys = [...goldenKeys(200), ...goldenProbes(300)]

function fixedSnapshot(layout: 'blocked' | 'classic', scheme?: 1): Uint8Array {
  const filter = MemoryBloomFilter.fromParametersSync({ bits: layout === 'blocked' ? 2048 : 1200, hashes: 5, shards: 2, seed: 77, layout, scheme })
  filter.addMany(goldenKeys(100))
  return filter.export()
}

function layeredSnapshot(window: boolean): Uint8Array {
  let now = GOLDEN_NOW
  const filter = LayeredMemoryFilter.createSync({ capacity: 30, errorRate: 0.05, growth: 2, seed: 78, ...(window ? { window: { seconds: 60, keep: 3 }, clock: () => now } : {}) })
  for (let i = 0; i < 3; i++) {
    filter.addMany(goldenKeys(60, `w${i}`))
    now += 60_000
  }
  return filter.export()
}

const SNAPSHOTS = [fixedSnapshot('blocked'), fixedSnapshot('classic'), fixedSnapshot('classic', 1), layeredSnapshot(false), layeredSnapshot(true)]

/** What a call did: the error's code (a BloomError that isBloomError recognises), or its answers. */
function outcome(open: () => { hasMany(keys: string[]): boolean[] }): string {
  try {
    return open().hasMany(keys).map(Number).join('')
  } catch (error) {
    return isBloomError(error) ? error.code : `not a BloomError: ${String(error)}`
  }
}

/** The full filter that takes this snapshot: the layered import for version 2, the fixed one otherwise. */
function fullOutcome(bytes: Uint8Array): string {
  const version = bytes.length >= 6 ? bytes[4] | (bytes[5] << 8) : 0
  return outcome(() => (version === 2 ? LayeredMemoryFilter.importSync(bytes, { clock }) : MemoryBloomFilter.importSync(bytes)))
}

/** Writes the CRC-32s a damaged field would otherwise fail, so that the checks behind them are reached. */
function reseal(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  const fixedHeader = (at: number) => at + 40 <= bytes.length && view.setUint32(at + 36, crc32(bytes.subarray(at, at + 36)), true)
  if (bytes.length < 68 || view.getUint16(4, true) !== 2) {
    fixedHeader(0)
    return
  }
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  view.setUint32(64, crc32(bytes.subarray(0, 64)), true)
  // Each layer's record and its version-1 header, as far as the lengths they hold lead.
  for (let at = 68; at + 60 <= bytes.length; ) {
    view.setUint32(at + 16, crc32(bytes.subarray(at, at + 16)), true)
    fixedHeader(at + 20)
    const bits = view.getUint32(at + 36, true) + view.getUint32(at + 40, true) * 2 ** 32
    at += 20 + 44 + bits / 8
    if (!Number.isInteger(at)) break
  }
}

const damage = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  // A header or record field changed with its CRC-32 written again: the parameter and policy checks.
  fc.record({ kind: fc.constant('field' as const), at: fc.nat({ max: 130 }), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), xor: fc.constant(0) }),
  fc.record({ kind: fc.constant('append' as const), at: fc.integer({ min: 1, max: 9 }), xor: fc.constant(0) }),
)

function damaged(snapshot: Uint8Array, { kind, at, xor }: { kind: string; at: number; xor: number }): Uint8Array {
  if (kind === 'cut') return snapshot.slice(0, at % snapshot.length)
  if (kind === 'append') return Uint8Array.from([...snapshot, ...new Uint8Array(at)])
  const bytes = snapshot.slice()
  bytes[at % bytes.length] ^= xor
  if (kind === 'field') reseal(bytes)
  return bytes
}

describe('a damaged snapshot', () => {
  prop([fc.constantFrom(...SNAPSHOTS.keys()), damage], { numRuns: 1500 })('the reader refuses it with the full filter’s code, or both answer alike', (which, how) => {
    const bytes = damaged(SNAPSHOTS[which], how)
    const full = fullOutcome(bytes)
    const read = outcome(() => openLayeredSnapshot(bytes, { clock }))
    // The one documented difference: a reader never sizes (docs/SPEC.md section 1), so a layered
    // header whose first layer cannot be sized, which the full filter refuses, is still read.
    if (full === 'BLOOM_CORRUPT_SNAPSHOT' && /^[01]+$/.test(read) && sizingRefusal(bytes)) return
    expect(read).toBe(full)
    if (bytes[4] !== 2 || bytes[5] !== 0) expect(outcome(() => openSnapshot(bytes))).toBe(full)
  })

  test('the damage reaches every check: each code and a few answers come out', () => {
    const seen = new Set<string>()
    fc.assert(
      fc.property(fc.constantFrom(...SNAPSHOTS.keys()), damage, (which, how) => {
        const read = outcome(() => openLayeredSnapshot(damaged(SNAPSHOTS[which], how), { clock }))
        seen.add(/^[01]+$/.test(read) ? 'answers' : read)
      }),
      { numRuns: 1500 },
    )
    expect([...seen].sort()).toEqual(['BLOOM_CORRUPT_SNAPSHOT', 'BLOOM_UNSUPPORTED_VERSION', 'answers'])
  })
})

/** Whether the full filter's refusal is that the policy's first layer cannot be sized. */
function sizingRefusal(bytes: Uint8Array): boolean {
  try {
    LayeredMemoryFilter.importSync(bytes, { clock })
    return false
  } catch (error) {
    return /impossible policy: capacity must be (at most|small enough to size)/.test((error as Error).message)
  }
}

test.each([
  ['a wrong magic', 'BLOOM_CORRUPT_SNAPSHOT', (bytes: Uint8Array) => (bytes[0] = 0x41)],
  ['format version 7', 'BLOOM_UNSUPPORTED_VERSION', (bytes: Uint8Array) => (bytes[4] = 7)],
  ['hash scheme 4', 'BLOOM_UNSUPPORTED_VERSION', (bytes: Uint8Array) => (bytes[6] = 4)],
  ['0 hashes', 'BLOOM_CORRUPT_SNAPSHOT', (bytes: Uint8Array) => (bytes[7] = 0)],
  ['a flag', 'BLOOM_CORRUPT_SNAPSHOT', (bytes: Uint8Array) => (bytes[33] = 1)],
])('%s (its header CRC-32 written again): the reader and the full filter refuse with %s', (_, code, change) => {
  const bytes = fixedSnapshot('blocked')
  change(bytes)
  reseal(bytes)
  expect(outcome(() => openSnapshot(bytes))).toBe(code)
  expect(fullOutcome(bytes)).toBe(code)
})

test('a payload bit changed: BLOOM_CORRUPT_SNAPSHOT, and no answer', () => {
  const bytes = fixedSnapshot('blocked')
  bytes[50] ^= 1
  expect(outcome(() => openSnapshot(bytes))).toBe('BLOOM_CORRUPT_SNAPSHOT')
  expect(fullOutcome(bytes)).toBe('BLOOM_CORRUPT_SNAPSHOT')
})
