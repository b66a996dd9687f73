import { expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { checkOptionNames } from '@bloomkit/core/store'

// Issue 23, item 6: the one check every backend's create/open/import runs on its options.

function messageOf(call: () => void): string {
  try {
    call()
  } catch (error) {
    expect(error).toBeInstanceOf(BloomError)
    expect((error as BloomError).code).toBe('BLOOM_INVALID_PARAMETER')
    return (error as BloomError).message
  }
  return 'returned'
}

test('an unknown name is refused, naming the call, the name, the nearest allowed name and all of them', () => {
  expect(messageOf(() => checkOptionNames('X.create', { capcity: 1, errorRate: 0.1 }, ['sizing']))).toBe(
    'X.create: unknown option "capcity" (did you mean "capacity"?); it takes capacity, errorRate, shards, seed, layout',
  )
  // Case is ignored for the suggestion; a name far from every allowed one gets none; all unknown names are listed.
  expect(messageOf(() => checkOptionNames('X.open', { Timeout: 1, frobnicate: true }, ['kind'], ['timeout']))).toBe(
    'X.open: unknown options "Timeout" (did you mean "timeout"?), "frobnicate"; it takes kind, timeout',
  )
})

test('groups and own names add up, each name once; allowed names, a non-object and an empty object pass', () => {
  const all = { capacity: 1, errorRate: 0.1, shards: 1, seed: 1, layout: 'classic', growth: 2, tightening: 0.5, window: {}, clock: () => 0, counting: true, kind: 'fixed', ttl: 1 }
  expect(messageOf(() => checkOptionNames('X', all, ['sizing', 'layered', 'counting', 'kind'], ['ttl']))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', { bits: 8, hashes: 1, shards: 1, seed: 0, layout: 'classic', scheme: 1 }, ['parameters']))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', undefined, []))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', 42, []))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', {}, []))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', { growth: 2 }, ['sizing']))).toMatch(/unknown option "growth"; it takes capacity, errorRate, shards, seed, layout$/)
  expect(messageOf(() => checkOptionNames('X', { shards: 1, capacity: 1 }, ['sizing', 'parameters']))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', { nope: 1 }, ['sizing', 'parameters']))).toMatch(/it takes capacity, errorRate, shards, seed, layout, bits, hashes, scheme$/)
})

test('a package with its own error class passes a maker', () => {
  class OwnError extends Error {}
  expect(() => checkOptionNames('G', { nulTtl: 1 }, [], ['nullTtl'], (message) => new OwnError(message))).toThrow(OwnError)
})
