import { inspect } from 'node:util'
import { describe, expect, test } from 'vitest'
import { BloomFilter, isBloomError } from '@bloomkit/core'
import { checkParameters, createKeyHasher, formatParameters, seedNote } from '@bloomkit/core/store'
import { assertSameParameters } from '../src/parameters.js'
import { ReferenceBitStore } from '@bloomkit/core/testing'

// The seed is the key of the keyed hashing: whoever reads it can craft keys that read present.
// Errors and logged objects reach logs and HTTP responses, so neither may carry it.
const SEED = 2_718_281_828
const parameters = checkParameters({ bits: 4096, hashes: 5, shards: 2, seed: SEED, layout: 'classic' })

describe('the seed stays out of messages and logs', () => {
  test('util.inspect (console.log) of a filter shows its parameters with the seed hidden', async () => {
    const filter = new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(SEED))
    for (const shown of [inspect(filter), inspect({ filter }, { depth: 10 }), inspect([filter], { showHidden: true })]) {
      expect(shown).not.toContain(String(SEED))
      expect(shown).toContain("seed: '<hidden>'")
    }
    expect(inspect(filter)).toMatch(/^BloomFilter \{\s+bits: 4096,\s+hashes: 5,\s+shards: 2,\s+layout: 'classic',\s+scheme: 3,\s+seed: '<hidden>',\s+closed: false\s+\}$/)
    expect(filter.parameters.seed).toBe(SEED)
  })

  test('BLOOM_INCOMPATIBLE names the parameters that differ, and says so when only the seeds differ, without printing them', () => {
    expect(formatParameters(parameters)).toBe('bits=4096 hashes=5 shards=2 layout=classic scheme=3')
    let caught: unknown
    try {
      assertSameParameters(parameters, { ...parameters, seed: 42 }, 'the snapshot')
    } catch (error) {
      caught = error
    }
    expect(isBloomError(caught) && caught.code).toBe('BLOOM_INCOMPATIBLE')
    expect((caught as Error).message).toBe(
      'the snapshot has different parameters: expected bits=4096 hashes=5 shards=2 layout=classic scheme=3, got bits=4096 hashes=5 shards=2 layout=classic scheme=3; the seeds differ',
    )
    expect((caught as Error).message).not.toContain(String(SEED))
  })

  test('seedNote says nothing of seeds the caller left to chance (issue 37 item 2: create without seed was told "the seeds differ")', () => {
    expect(seedNote(parameters, { ...parameters, seed: 42 })).toBe('; the seeds differ')
    expect(seedNote(parameters, { ...parameters, seed: 42 }, { seeded: true })).toBe('; the seeds differ')
    expect(seedNote(parameters, { ...parameters, seed: 42 }, { seeded: false })).toBe('')
    expect(seedNote(parameters, parameters)).toBe('')
  })

  test('a hasher made with another seed is refused without printing either seed', async () => {
    const other = await createKeyHasher(7)
    expect(() => new BloomFilter(new ReferenceBitStore(parameters), other)).toThrow(/^the hasher's seed differs from the store's/)
  })
})
