// Core's sources by path: test-support is outside the packages, where '@bloomkit/core' resolves.
import { BloomFilter, sizeFilter, type FilterParameters } from '../packages/core/src/index.js'
import { fillPositions, shardOf } from '../packages/core/src/spec.js'
import { createKeyHasher, decodeSnapshot, KeyHasher } from '../packages/core/src/store/index.js'
import { ReferenceBitStore } from '../packages/core/src/testing/index.js'

/** What the legacy filter was created with: `create` with these options today sizes the same bits. */
export const legacyOptions = { capacity: 60, errorRate: 0.01, shards: 2, seed: 11, layout: 'classic' } as const

/**
 * A classic filter as an earlier release (hash scheme 1) wrote it: {@link legacyOptions}' sizes, small
 * shards (where schemes 1 and 3 differ most), holding `legacyKeys`. Its snapshot is made on the
 * reference store with `scheme: 1`, whose export writes the bytes of docs/SPEC.md's scheme-1
 * `hex snapshot` vector for that filter (packages/core/test/spec.test.ts holds it to them).
 */
export const legacyParameters: FilterParameters = { ...sizeFilter(legacyOptions), scheme: 1 }
export const legacyKeys = Array.from({ length: 60 }, (_, i) => `old:${i}`)
/** Keys never added; at this fill many are false positives, which must stay exactly the same. */
export const legacyProbes = Array.from({ length: 3000 }, (_, i) => `probe:${i}`)

/** The legacy filter's snapshot. */
export async function legacySnapshot(): Promise<Uint8Array> {
  const filter = new BloomFilter(new ReferenceBitStore(legacyParameters), await createKeyHasher(legacyParameters.seed))
  await filter.addMany(legacyKeys)
  return filter.export()
}

/**
 * What a scheme-1 filter with these snapshot bits answers for each key, read from docs/SPEC.md
 * section 4.1 (fillPositions) over the payload: the answers an earlier release gave.
 */
export function scheme1Answers(snapshot: Uint8Array, keys: readonly string[]): boolean[] {
  const { parameters, payload } = decodeSnapshot(snapshot)
  if (parameters.scheme !== 1) throw new Error(`expected a scheme-1 snapshot, got scheme ${parameters.scheme}`)
  const shardBits = parameters.bits / parameters.shards
  const hasher = new KeyHasher(parameters.seed)
  const positions = new Uint32Array(parameters.hashes)
  return keys.map((key) => {
    hasher.hash(key)
    const base = shardOf(hasher.a, hasher.b, parameters.shards) * shardBits
    fillPositions(hasher.a, hasher.b, shardBits, parameters.hashes, positions, 0)
    return positions.every((p) => (payload[(base + p) >>> 3] & (0x80 >>> ((base + p) & 7))) !== 0)
  })
}
