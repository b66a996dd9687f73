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

test('groups and own names add up, each name once; allowed names and an empty object pass', () => {
  const all = { capacity: 1, errorRate: 0.1, shards: 1, seed: 1, layout: 'classic', growth: 2, tightening: 0.5, window: { seconds: 60, keep: 2 }, clock: () => 0, counting: true, kind: 'fixed', ttl: 1 }
  expect(messageOf(() => checkOptionNames('X', all, ['sizing', 'layered', 'counting', 'kind'], ['ttl']))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', { bits: 8, hashes: 1, shards: 1, seed: 0, layout: 'classic', scheme: 1 }, ['parameters']))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', {}, []))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', { growth: 2 }, ['sizing']))).toMatch(/unknown option "growth"; it takes capacity, errorRate, shards, seed, layout$/)
  expect(messageOf(() => checkOptionNames('X', { shards: 1, capacity: 1 }, ['sizing', 'parameters']))).toBe('returned')
  expect(messageOf(() => checkOptionNames('X', { nope: 1 }, ['sizing', 'parameters']))).toMatch(/it takes capacity, errorRate, shards, seed, layout, bits, hashes, scheme$/)
})

test('a package with its own error class passes a maker', () => {
  class OwnError extends Error {}
  expect(() => checkOptionNames('G', { nulTtl: 1 }, [], ['nullTtl'], (message) => new OwnError(message))).toThrow(OwnError)
})

// Issue 33, items 13, 14 and 17: the options object itself, inherited options, and the value of
// every option core defines, checked in the same one place.

test('options that are not an object are refused, naming the call', () => {
  for (const options of [undefined, null, 42, 'capacity', true, () => ({})]) {
    expect(messageOf(() => checkOptionNames('X.create', options, ['sizing']))).toMatch(/^X\.create: options must be an object; got /)
  }
})

test('an option inherited from a prototype is refused, not read', () => {
  const inherited = Object.assign(Object.create({ seed: 0, capcity: 5 }), { capacity: 1000, errorRate: 0.01 })
  expect(messageOf(() => checkOptionNames('X.create', inherited, ['sizing']))).toBe('X.create: options must be own properties, not inherited: seed, capcity')
  // A getter on a class's prototype is inherited too; an own getter is the object's own.
  class Options {
    capacity = 1000
    get errorRate() {
      return 0.01
    }
  }
  expect(messageOf(() => checkOptionNames('X.create', new Options(), ['sizing']))).toMatch(/not inherited: errorRate$/)
  const own = { capacity: 1000, get errorRate() { return 0.01 } }
  expect(messageOf(() => checkOptionNames('X.create', own, ['sizing']))).toBe('returned')
})

test("null is a value, not \"left out\": it is refused for every option of core's groups, naming the option and its range", () => {
  const ranges: Record<string, RegExp> = {
    capacity: /^capacity must be an integer from 1 to 9007199254740991; got null$/,
    errorRate: /^errorRate must be a number greater than 0 and less than 1; got null$/,
    shards: /^shards must be an integer from 1 to 65536; got null$/,
    seed: /^seed must be an integer from 0 to 4294967295; got null$/,
    layout: /^layout must be 'blocked' or 'classic'; got null$/,
    bits: /^bits must be an integer from 8 to /,
    hashes: /^hashes must be an integer from 1 to 64; got null$/,
    scheme: /^scheme must be 1, 2 or 3; got null$/,
    growth: /^growth must be an integer from 1 to 65536; got null$/,
    tightening: /^tightening must be a number greater than 0 and less than 1; got null$/,
    window: /^window must be an object \{ seconds, keep \}; got null$/,
    clock: /^clock must be a function returning milliseconds since the Unix epoch; got null$/,
    counting: /^counting must be true or false; got null$/,
    kind: /^kind must be 'fixed', 'layered' or 'counting' \(or left out for any\); got null$/,
  }
  for (const [name, range] of Object.entries(ranges)) {
    expect(messageOf(() => checkOptionNames('X', { [name]: null }, ['sizing', 'parameters', 'layered', 'counting', 'kind']))).toMatch(range)
  }
  // undefined is "left out", for every name.
  expect(messageOf(() => checkOptionNames('X', Object.fromEntries(Object.keys(ranges).map((name) => [name, undefined])), ['sizing', 'parameters', 'layered', 'counting', 'kind']))).toBe('returned')
})

test("a window's fields are checked wherever window is given, names included", () => {
  expect(messageOf(() => checkOptionNames('X.open', { window: { seconds: 0, keep: 2 } }, ['layered']))).toBe('window.seconds must be an integer from 1 to 4294967295; got 0')
  expect(messageOf(() => checkOptionNames('X.open', { window: { seconds: 60, kep: 2 } }, ['layered']))).toMatch(/^window: unknown option "kep" \(did you mean "keep"\?\)/)
})

test('booleans are booleans: counting 1, "yes", 0 and "false" are refused', () => {
  for (const counting of [1, 'yes', 0, 'false', 'true']) {
    expect(messageOf(() => checkOptionNames('X', { counting }, ['counting']))).toMatch(/^counting must be true or false; got /)
  }
  expect(messageOf(() => checkOptionNames('X', { counting: false }, ['counting']))).toBe('returned')
})

test("a backend's own names are left to the backend's value checks", () => {
  expect(messageOf(() => checkOptionNames('X', { ttl: null }, [], ['ttl']))).toBe('returned')
})
