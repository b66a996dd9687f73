import fc from 'fast-check'
import { BloomError, optimalParameters, sizeFilter, type BloomKey, type FilterParameters } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { describe, expect, test } from 'vitest'
import {
  CORE_RULES,
  detachedBytes,
  LAYERED_ERROR_RATE,
  JUNK,
  KEY,
  KEYS,
  keysArgument,
  keysRefusal,
  optionsOf,
  PARAMETER_RULES,
  refusal,
  refusalsOf,
  refusedOrHonoured,
  validKey,
  valueOf,
  type OptionsCase,
} from '../../../test-support/bad-inputs.js'
import { prop } from '../../../test-support/property-test.js'

// Issue 33 items 13, 14 and 17 on the memory backend: every option value is checked for its type
// and range (null is not "left out", booleans are booleans, own properties only), every bad argument
// gets a coded BloomError naming it. First each item as found, then random values at every option
// and argument of every public call.

describe('item 13: seed: null is refused, not read as seed 0', () => {
  test('by MemoryBloomFilter.create, CountingMemoryFilter.create, LayeredMemoryFilter.create and sizeFilter', async () => {
    const options = { capacity: 1000, errorRate: 0.01, seed: null as unknown as number }
    const seedRange = refusal(/^seed must be an integer from 0 to 4294967295; got null$/)
    await expect(MemoryBloomFilter.create(options)).rejects.toThrow(seedRange)
    await expect(CountingMemoryFilter.create(options)).rejects.toThrow(seedRange)
    await expect(LayeredMemoryFilter.create({ ...options, growth: 2 })).rejects.toThrow(seedRange)
    expect(() => sizeFilter(options)).toThrow(seedRange)
    // And a null in explicit parameters, where layout once fell back to classic.
    expect(() => MemoryBloomFilter.fromParametersSync({ bits: 1024, hashes: 3, shards: 1, seed: 7, layout: null as never })).toThrow(refusal(/^layout must be 'blocked' or 'classic'; got null$/))
  })
})

describe('item 14: counting must be a boolean', () => {
  test.each([1, 'yes', 0, null, 'false'])('MemoryBloomFilter.create({ counting: %j }) is refused, not a plain filter', async (counting) => {
    await expect(MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01, counting } as never)).rejects.toThrow(refusal(/^counting must be true or false; got /))
  })

  test('counting: false to a counting create is refused; counting: false to a plain create is a plain filter', async () => {
    await expect(CountingMemoryFilter.create({ capacity: 1000, errorRate: 0.01, counting: false } as never)).rejects.toThrow(refusal(/^counting must be true or left out/))
    expect((await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01, counting: false } as never)).kind).toBe('fixed')
  })
})

describe('item 17: coded errors for bad arguments, and nothing accepted silently', () => {
  test('addMany, hasMany and removeMany given null, a number or an async iterable: BLOOM_INVALID_PARAMETER naming keys', async () => {
    const plain = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
    const counting = await CountingMemoryFilter.create({ capacity: 1000, errorRate: 0.01 })
    const layered = await LayeredMemoryFilter.create({ capacity: 1000, errorRate: 0.01, growth: 2 })
    const stream = (async function* () {
      yield 'a'
    })()
    for (const keys of [null, 42, stream]) {
      const calls = [() => plain.addMany(keys as never), () => plain.hasMany(keys as never), () => counting.addMany(keys as never), () => counting.removeMany(keys as never), () => layered.addMany(keys as never), () => layered.hasMany(keys as never)]
      for (const call of calls) expect(call).toThrow(refusal(/^keys must be an iterable/))
    }
    expect(() => plain.addMany(stream as never)).toThrow(/got an async iterable: read it in batches/)
  })

  test('merge({}) and merge(null): BLOOM_INVALID_PARAMETER', async () => {
    const filter = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
    for (const other of [{}, null, 'filter']) await expect(filter.merge(other as never)).rejects.toThrow(refusal(/^merge: other must be a fixed or counting bloomkit filter/))
  })

  test('options inherited from a prototype are refused, not read', async () => {
    const inherited = Object.assign(Object.create({ seed: 0 }), { capacity: 1000, errorRate: 0.01 })
    await expect(MemoryBloomFilter.create(inherited)).rejects.toThrow(refusal(/options must be own properties, not inherited: seed$/))
    await expect(CountingMemoryFilter.create(inherited)).rejects.toThrow(refusal(/not inherited: seed$/))
    expect(() => sizeFilter(Object.create({ capacity: 1000, errorRate: 0.01 }))).toThrow(refusal(/not inherited: capacity, errorRate$/))
  })

  test('optimalParameters refuses an unknown option name', () => {
    expect(() => optimalParameters({ capacity: 1000, errorRate: 0.01, capcity: 5 } as never)).toThrow(refusal(/optimalParameters: unknown option "capcity" \(did you mean "capacity"\?\); it takes capacity, errorRate$/))
    expect(() => optimalParameters({ capacity: 1000, errorRate: 0.01, seed: 5 } as never)).toThrow(refusal(/unknown option "seed"/))
  })

  test('a Uint8Array whose buffer was detached is BLOOM_INVALID_KEY, not the empty key', async () => {
    const plain = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
    const counting = await CountingMemoryFilter.create({ capacity: 1000, errorRate: 0.01 })
    const layered = await LayeredMemoryFilter.create({ capacity: 1000, errorRate: 0.01, growth: 2 })
    plain.add(new Uint8Array(0))
    counting.add(new Uint8Array(0))
    layered.add(new Uint8Array(0))
    const detached = detachedBytes()
    const invalidKey = refusal(/^key must be a string or a Uint8Array whose buffer is not detached/, 'BLOOM_INVALID_KEY')
    for (const call of [
      () => plain.add(detached),
      () => plain.has(detached),
      () => plain.addMany([detached]),
      () => plain.hasMany(['a', detached]),
      () => counting.remove(detached),
      () => counting.removeMany([detached]),
      () => counting.has(detached),
      () => layered.add(detached),
      () => layered.has(detached),
      () => layered.hasMany(new Set([detached])),
    ]) {
      expect(call).toThrow(invalidKey)
    }
    // The empty key is a key: it was added, and reads present.
    expect([plain.has(new Uint8Array(0)), counting.has(new Uint8Array(0)), layered.has(new Uint8Array(0))]).toEqual([true, true, true])
  })

  test('tightening or clock without growth or window is refused, not ignored by a fixed filter', async () => {
    await expect(MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01, tightening: 0.5 } as never)).rejects.toThrow(refusal(/make a layered filter/))
    await expect(LayeredMemoryFilter.create({ capacity: 1000, errorRate: 0.01, clock: Date.now } as never)).rejects.toThrow(refusal(/^growth must be/))
  })
})

// --- Random values at every option and argument -------------------------------------------------

const { capacity, errorRate, shards, seed, layout, growth, tightening, window, clock, counting } = CORE_RULES
const SIZING = { capacity, errorRate, shards, seed, layout }
const LAYERED = { growth, tightening, window, clock }
const REQUIRED = ['capacity', 'errorRate']

/** The sizing options among `given`, as `sizeFilter` takes them. */
function sizingOf(given: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(given).filter(([name, value]) => name in SIZING && value !== undefined))
}

/** A filter's parameters are the sizing of exactly the options given: none dropped, none defaulted silently. */
function expectSizedBy(parameters: FilterParameters, given: Readonly<Record<string, unknown>>): void {
  const sizing = sizingOf(given)
  const expected = sizeFilter(sizing as never)
  // Without a seed, a random one; with one, that seed.
  expect(parameters).toEqual({ ...expected, seed: sizing.seed === undefined ? parameters.seed : sizing.seed })
}

const layeredGiven = (given: Readonly<Record<string, unknown>>) => Object.entries(given).filter(([name, value]) => name in LAYERED && value !== undefined).map(([name]) => name)

describe('random values at every option of create, sizeFilter and optimalParameters (memory)', () => {
  prop([optionsOf({ ...SIZING, ...LAYERED, counting }, { required: REQUIRED })], { numRuns: 300 })('MemoryBloomFilter.create', async (drawn) => {
    // A counting or layered filter comes from its own entry: those options are refused here.
    const refused = refusalsOf(drawn, { ...SIZING, ...LAYERED, counting }, { required: REQUIRED, extra: (given) => [...(given.counting === true ? ['counting'] : []), ...layeredGiven(given)] })
    await refusedOrHonoured('MemoryBloomFilter.create', () => MemoryBloomFilter.create(drawn.options as never), refused, (filter) => {
      expect(filter.kind).toBe('fixed')
      expectSizedBy(filter.parameters, drawn.given)
    })
  })

  prop([optionsOf({ ...SIZING, counting }, { required: REQUIRED })], { numRuns: 200 })('CountingMemoryFilter.create', async (drawn) => {
    const refused = refusalsOf(drawn, { ...SIZING, counting }, { required: REQUIRED, extra: (given) => (given.counting === false ? ['counting'] : []) })
    await refusedOrHonoured('CountingMemoryFilter.create', () => CountingMemoryFilter.create(drawn.options as never), refused, (filter) => {
      expect(filter.kind).toBe('counting')
      expectSizedBy(filter.parameters, drawn.given)
    })
  })

  const LAYERED_RULES = { ...SIZING, errorRate: LAYERED_ERROR_RATE, ...LAYERED }
  prop([fc.oneof(optionsOf(LAYERED_RULES, { required: REQUIRED, base: { growth: 2 } }), optionsOf(LAYERED_RULES, { required: REQUIRED, base: { window: { seconds: 60, keep: 2 } } }))], {
    numRuns: 200,
  })('LayeredMemoryFilter.create', async (drawn) => {
    const refused = refusalsOf(drawn, LAYERED_RULES, { required: REQUIRED, extra: (given) => (given.growth === undefined && given.window === undefined ? ['growth'] : []) })
    await refusedOrHonoured('LayeredMemoryFilter.create', () => LayeredMemoryFilter.create(drawn.options as never), refused, (filter) => {
      const given = drawn.given as Record<string, never>
      const rotating = given.window !== undefined
      expect(filter.policy).toEqual({
        kind: rotating ? 'rotating' : 'scalable',
        capacity: given.capacity,
        errorRate: given.errorRate,
        growth: given.growth ?? 0,
        tightening: given.tightening ?? 0.5,
        seconds: rotating ? (given.window as { seconds: number }).seconds : 0,
        keep: rotating ? (given.window as { keep: number }).keep : 0,
        seed: given.seed ?? filter.policy.seed,
        layout: given.layout,
        shards: given.shards,
      })
    })
  })

  prop([optionsOf(SIZING, { required: REQUIRED })], { numRuns: 300 })('sizeFilter', async (drawn) => {
    await refusedOrHonoured('sizeFilter', () => sizeFilter(drawn.options as never), refusalsOf(drawn, SIZING, { required: REQUIRED }), (parameters) => {
      const given = drawn.given as Record<string, never>
      expect(parameters.seed).toBe(given.seed ?? 0)
      if (given.layout !== undefined) expect(parameters.layout).toBe(given.layout)
      if (given.shards !== undefined) expect(parameters.shards).toBe(given.shards)
    })
  })

  prop([optionsOf({ capacity, errorRate }, { required: REQUIRED })], { numRuns: 300 })('optimalParameters', async (drawn) => {
    await refusedOrHonoured('optimalParameters', () => optimalParameters(drawn.options as never), refusalsOf(drawn, { capacity, errorRate }, { required: REQUIRED }), (dimensions) => {
      const { capacity: n, errorRate: p } = drawn.given as { capacity: number; errorRate: number }
      const bits = Math.floor((-n * Math.log(p)) / (Math.LN2 * Math.LN2))
      expect(dimensions).toEqual({ bits: Math.max(1, bits), hashes: Math.max(1, Math.round((bits / n) * Math.LN2)) })
    })
  })

  /** What checkParameters refuses beyond each field's own range: layout against scheme, and bits against shards and hashes. */
  function parameterRefusals(given: Readonly<Record<string, unknown>>): string[] {
    const { bits, hashes, shards: shardCount, layout: layoutGiven, scheme } = given as { bits: number; hashes: number; shards: number; layout?: string; scheme?: number }
    // Only fields that pass their own rules combine; a wrong one is refused by its rule already.
    if (!(['bits', 'hashes', 'shards', 'layout', 'scheme'] as const).every((name) => given[name] === undefined || PARAMETER_RULES[name].valid(given[name]))) return []
    const schemeLayout = scheme === undefined ? undefined : scheme === 2 ? 'blocked' : 'classic'
    const resolved = layoutGiven ?? schemeLayout ?? 'classic'
    if (schemeLayout !== undefined && schemeLayout !== resolved) return ['scheme']
    const shardBits = bits / shardCount
    const multiple = resolved === 'blocked' ? 512 : 8
    return Number.isInteger(shardBits) && shardBits % multiple === 0 && shardBits >= hashes && shardBits <= 2 ** 32 ? [] : ['bits']
  }

  const PARAMETERS_REQUIRED = ['bits', 'hashes', 'shards', 'seed']
  prop([optionsOf(PARAMETER_RULES, { required: PARAMETERS_REQUIRED })], { numRuns: 300 })('MemoryBloomFilter.fromParameters and CountingMemoryFilter.fromParametersSync', async (drawn) => {
    const refused = refusalsOf(drawn, PARAMETER_RULES, { required: PARAMETERS_REQUIRED, extra: parameterRefusals })
    const honoured = (filter: { parameters: FilterParameters }) => {
      const given = drawn.given as Record<string, never>
      const resolved = given.layout ?? (given.scheme === undefined ? 'classic' : given.scheme === 2 ? 'blocked' : 'classic')
      expect(filter.parameters).toEqual({ bits: given.bits, hashes: given.hashes, shards: given.shards, seed: given.seed, layout: resolved, scheme: given.scheme ?? (resolved === 'blocked' ? 2 : 3) })
    }
    await refusedOrHonoured('MemoryBloomFilter.fromParameters', () => MemoryBloomFilter.fromParameters(drawn.options as never), refused, honoured)
    await refusedOrHonoured('CountingMemoryFilter.fromParametersSync', () => CountingMemoryFilter.fromParametersSync(drawn.options as never), refused, honoured)
  })
})

describe('random arguments to every method of plain, counting and layered memory filters', () => {
  const filters = async () => ({
    plain: await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 }),
    counting: await CountingMemoryFilter.create({ capacity: 1000, errorRate: 0.01 }),
    scalable: await LayeredMemoryFilter.create({ capacity: 1000, errorRate: 0.01, growth: 2 }),
    rotating: await LayeredMemoryFilter.create({ capacity: 1000, errorRate: 0.01, window: { seconds: 60, keep: 2 } }),
  })

  prop([fc.array(KEY, { minLength: 1, maxLength: 8 })], { numRuns: 150 })('add, has and remove of one key', async (keys) => {
    const made = await filters()
    for (const key of keys) {
      const refused = validKey(key) ? [] : ['key']
      for (const [name, filter] of Object.entries(made)) {
        await refusedOrHonoured(`${name}.add`, () => filter.add(key as BloomKey), refused, (answer) => expect(typeof answer).toBe('boolean'), ['BLOOM_INVALID_KEY'])
        await refusedOrHonoured(`${name}.has`, () => filter.has(key as BloomKey), refused, (answer) => expect(answer).toBe(true), ['BLOOM_INVALID_KEY'])
      }
      await refusedOrHonoured('counting.remove', () => made.counting.remove(key as BloomKey), refused, (answer) => expect(answer).toBe(true), ['BLOOM_INVALID_KEY'])
      await refusedOrHonoured('counting.add again', () => made.counting.add(key as BloomKey), refused, () => {}, ['BLOOM_INVALID_KEY'])
    }
  })

  prop([KEYS], { numRuns: 150 })('addMany, hasMany and removeMany', async (drawn) => {
    const made = await filters()
    const { refused, codes } = keysRefusal(drawn)
    const list = drawn.list ?? []
    for (const [name, filter] of Object.entries(made)) {
      const keys = () => keysArgument(drawn)
      await refusedOrHonoured(`${name}.addMany`, () => filter.addMany(keys() as never), refused, (answers) => expect(answers).toHaveLength(list.length), codes)
      await refusedOrHonoured(`${name}.hasMany`, () => filter.hasMany(keys() as never), refused, (answers) => expect(answers).toEqual(list.map(() => true)), codes)
      if (name === 'counting') {
        await refusedOrHonoured('counting.removeMany', () => made.counting.removeMany(keys() as never), refused, (answers) => expect(answers).toHaveLength(list.length), codes)
      }
    }
  })

  prop([fc.oneof(fc.constantFrom(...JUNK), fc.constantFrom('same', 'other', 'counting', 'layered'))], { numRuns: 80 })('merge', async (other) => {
    const { plain, counting: countingFilter, scalable } = await filters()
    const resolved =
      other === 'same'
        ? MemoryBloomFilter.fromParametersSync(plain.parameters)
        : other === 'other'
          ? await MemoryBloomFilter.create({ capacity: 10, errorRate: 0.1 })
          : other === 'counting'
            ? countingFilter
            : other === 'layered'
              ? scalable
              : other
    const expected = other === 'same' ? [] : ['merge']
    const codes = other === 'other' || other === 'counting' ? ['BLOOM_INCOMPATIBLE'] : ['BLOOM_INVALID_PARAMETER']
    await refusedOrHonoured('plain.merge', () => plain.merge(resolved as never), expected, () => {}, codes)
    // A layered filter refuses every merge with its own code.
    await refusedOrHonoured('scalable.merge', () => scalable.merge(resolved), ['merge'], () => {}, ['BLOOM_INCOMPATIBLE'])
  })

  prop([fc.oneof(fc.constantFrom(...JUNK), fc.constantFrom('plain', 'counting', 'layered')), valueOf(clock)], { numRuns: 80 })('import of a snapshot, and a layered import’s clock', async (snapshot, clockValue) => {
    const made = await filters()
    made.plain.add('k')
    made.counting.add('k')
    made.scalable.add('k')
    const bytes = snapshot === 'plain' ? made.plain.export() : snapshot === 'counting' ? made.counting.export() : snapshot === 'layered' ? made.scalable.export() : snapshot
    const codes = ['BLOOM_INVALID_PARAMETER', 'BLOOM_CORRUPT_SNAPSHOT', 'BLOOM_UNSUPPORTED_VERSION']
    const holdsK = (filter: { has(key: string): unknown }) => expect(filter.has('k')).toBe(true)
    await refusedOrHonoured('MemoryBloomFilter.import', () => MemoryBloomFilter.import(bytes as never), snapshot === 'plain' ? [] : ['snapshot'], holdsK, codes)
    await refusedOrHonoured('CountingMemoryFilter.import', () => CountingMemoryFilter.import(bytes as never), snapshot === 'counting' ? [] : ['snapshot'], holdsK, codes)
    const layeredRefused = [...(snapshot === 'plain' || snapshot === 'layered' ? [] : ['snapshot']), ...(clockValue === undefined || clock.valid(clockValue) ? [] : ['clock'])]
    await refusedOrHonoured('LayeredMemoryFilter.import', () => LayeredMemoryFilter.import(bytes as never, { clock: clockValue } as never), layeredRefused, holdsK, codes)
  })
})

test('the oracle is not vacuous: random options are refused and accepted both, and errors are never plain TypeErrors', async () => {
  const drawn = fc.sample(optionsOf({ ...SIZING, counting }, { required: REQUIRED }), { numRuns: 400, seed: 20261128 }) as OptionsCase[]
  const refusals = drawn.map((one) => refusalsOf(one, { ...SIZING, counting }, { required: REQUIRED }).length > 0)
  expect(refusals.filter(Boolean).length).toBeGreaterThan(100)
  expect(refusals.filter((refused) => !refused).length).toBeGreaterThan(60)
  expect(drawn.filter((one) => one.inherited.length > 0).length).toBeGreaterThan(10)
  expect(drawn.filter((one) => one.given.capacity === null || one.given.errorRate === null || one.given.seed === null).length).toBeGreaterThan(5)
  await expect(MemoryBloomFilter.create(null as never)).rejects.toBeInstanceOf(BloomError)
})
