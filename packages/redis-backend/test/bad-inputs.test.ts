import fc from 'fast-check'
import { sizeFilter, type FilterParameters } from '@bloomkit/core'
import { LayeredRedisFilter, RedisBloomFilter, RedisCountingFilter, sizeRedisFilter } from '@bloomkit/redis-backend'
import { afterAll, describe, expect, test } from 'vitest'
import { BACKEND_SIZING_RULES, backendRules, boolean, checkKeyCalls, CORE_RULES, CREATE_REQUIRED, detachedBytes, expectArgumentRefusals, givenValid, integer, KEY, KEYS, keysArgument, keysRefusal, kindRefusals, madeBy, optionsOf, present, refusal, refusalsOf, refusedOrHonoured, type OptionRule } from '../../../test-support/bad-inputs.js'
import { prop } from '../../../test-support/property-test.js'
import { standaloneClient, uniqueName } from './support/clients.js'

// Issue 33 items 13, 14 and 17 on Redis filters: every option of create, open, import and rebuild
// is checked for its type and range before a command is sent, whatever the call does with it, and
// every bad argument gets a coded error. First each item as found, then random values (fewer runs
// than memory: each create talks to a real redis-server).

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

describe('each item as found', () => {
  test('item 13: seed: null is refused by create (fixed, counting, layered), and no key is written', async () => {
    for (const extra of [{}, { counting: true }, { growth: 2 }]) {
      const name = uniqueName('bad-seed')
      await expect(RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, seed: null, ...extra } as never)).rejects.toThrow(refusal(/^seed must be an integer from 0 to 4294967295; got null$/))
      expect(await redis.keys(`${name}*`)).toEqual([])
    }
  })

  test('item 14: counting 1, "yes", 0 and null are refused, not a plain filter', async () => {
    for (const counting of [1, 'yes', 0, null]) {
      const name = uniqueName('bad-counting')
      await expect(RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, counting } as never)).rejects.toThrow(refusal(/^counting must be true or false; got /))
      expect(await redis.keys(`${name}*`)).toEqual([])
    }
  })

  test("item 17: rebuild(keys, { force: 'yes' }), null and inherited options, a kind create does not make: refused", async () => {
    const name = uniqueName('bad-options')
    const filter = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01 })
    try {
      for (const force of ['yes', 1, null]) await expect(filter.rebuild(['a'], { force } as never)).rejects.toThrow(refusal(/^force must be true or false; got /))
      await expect(filter.rebuild(['a'], null as never)).rejects.toThrow(refusal(/^rebuild: options must be an object; got null$/))
      const base = { capacity: 1000, errorRate: 0.01 }
      for (const [options, pattern] of [
        [{ ...base, ttl: null }, /^ttl must be an integer from 1 to 2147483647; got null$/],
        [{ ...base, blockReads: 'no' }, /^blockReads must be true or false; got "no"$/],
        [{ ...base, kind: 'counting' }, /^kind must be 'fixed' or left out/],
        [Object.assign(Object.create({ ttl: 60 }), base), /options must be own properties, not inherited: ttl$/],
      ] as const) {
        const other = uniqueName('bad-options')
        await expect(RedisBloomFilter.create(redis, other, options as never)).rejects.toThrow(refusal(pattern))
        expect(await redis.keys(`${other}*`)).toEqual([])
      }
      // An open checks every option it is given, even one a fixed filter does not use.
      await expect(RedisBloomFilter.open(redis, name, { clock: 'now' } as never)).rejects.toThrow(refusal(/^clock must be a function/))
      await expect(RedisBloomFilter.open(redis, name, { ttl: 0 } as never)).rejects.toThrow(refusal(/^ttl must be/))
    } finally {
      await filter.destroy()
    }
  })

  test('item 17: addMany/hasMany/removeMany of null, a number or an async iterable, merge({}), a detached key: coded', async () => {
    const plain = await RedisBloomFilter.create(redis, uniqueName('bad-args'), { capacity: 1000, errorRate: 0.01 })
    const counting = await RedisCountingFilter.create(redis, uniqueName('bad-args'), { capacity: 1000, errorRate: 0.01 })
    try {
      await expectArgumentRefusals(plain, counting)
    } finally {
      await plain.destroy()
      await counting.destroy()
    }
  })
})

// --- Random values ------------------------------------------------------------------------------

/** The backend's own options, from the README. */
const REDIS_RULES = {
  timeout: { valid: (value: unknown) => value === Infinity || integer(1, 2 ** 31 - 1)(value), values: [5000, Infinity, 0, 2 ** 31] },
  keysPerCommand: { valid: integer(1, 65_536), values: [512, 1, 65_537] },
  scanBytesPerKey: { valid: integer(0, 2 ** 31 - 1), values: [0, 512, -5] },
  blockReads: { valid: boolean, values: [true, false, 'no'] },
  batchConnection: { valid: boolean, values: [true, false, 1] },
  coalesceWait: { valid: integer(0, 1000), values: [0, 2, 1001] },
  lockWait: { valid: integer(0, 2 ** 31 - 1), values: [0, 1000, -1] },
  ttl: { valid: integer(1, 2 ** 31 - 1), values: [60, 3600, 0, 1.5] },
  replaceParameters: { valid: boolean, values: [true, false, 'yes'] },
  force: { valid: boolean, values: [true, false, 'yes'] },
  feed: { valid: boolean, values: [true, false, 'on'] },
  feedLength: { valid: integer(1, 2 ** 31 - 1), values: [16, 1024, 0] },
} satisfies Record<string, OptionRule>

const { clock, kind } = CORE_RULES
const ALL = backendRules(REDIS_RULES)
const valid = (given: Readonly<Record<string, unknown>>, name: keyof typeof ALL) => givenValid(ALL, given, name)

/** create's own refusals, beyond each option's range: what the kind it makes cannot take, and a feed's. */
function createRefusals(given: Readonly<Record<string, unknown>>): string[] {
  const refused = kindRefusals(given, ALL)
  if (given.feed === true && madeBy(given) === 'counting') refused.push('feed')
  return [...refused, ...feedRefusals(given)]
}

/** Every call: a feed's length only with a feed (a counting filter's create also refuses the feed). */
function feedRefusals(given: Readonly<Record<string, unknown>>): string[] {
  return given.feedLength !== undefined && given.feed !== true ? ['feedLength'] : []
}

function expectSizedBy(parameters: FilterParameters, given: Readonly<Record<string, unknown>>, counterBits: number): void {
  const sizing = Object.fromEntries(present(given, BACKEND_SIZING_RULES).map((name) => [name, given[name]]))
  expect(parameters).toEqual({ ...sizeRedisFilter(sizing as never, counterBits), seed: sizing.seed === undefined ? parameters.seed : sizing.seed })
}

type Made = RedisBloomFilter | RedisCountingFilter | LayeredRedisFilter

describe('random values at every option of create, open and import (Redis)', () => {
  prop([optionsOf(ALL, { required: CREATE_REQUIRED })], { numRuns: 40 })('RedisBloomFilter.create', async (drawn) => {
    const name = uniqueName('bad-inputs')
    const refused = refusalsOf(drawn, ALL, { required: CREATE_REQUIRED, extra: createRefusals })
    const made = await refusedOrHonoured('RedisBloomFilter.create', () => RedisBloomFilter.create(redis, name, drawn.options as never) as Promise<Made>, refused, async (filter) => {
      const given = drawn.given as Record<string, never>
      expect(filter.kind).toBe(madeBy(given))
      await filter.add('k')
      expect(await filter.has('k')).toBe(true)
      if (filter instanceof RedisBloomFilter || filter instanceof RedisCountingFilter) {
        expectSizedBy(filter.parameters, given, filter instanceof RedisCountingFilter ? 4 : 0)
        const ttlMs = await redis.pttl(`${name}:meta`)
        if (given.ttl === undefined) expect(ttlMs).toBe(-1)
        else expect(ttlMs).toBeGreaterThan(((given.ttl as number) - 5) * 1000)
      } else {
        expect(filter.policy).toMatchObject({ capacity: given.capacity, errorRate: given.errorRate, growth: given.growth ?? 0, tightening: given.tightening ?? 0.5 })
        if (given.seed !== undefined) expect(filter.policy.seed).toBe(given.seed)
      }
    }, undefined, (filter) => filter.destroy())
    if (made !== undefined) await made.destroy()
    // Nothing half-written: a refused create sends no write.
    else expect(await redis.keys(`${name}*`)).toEqual([])
  })

  let storedNames: Promise<Record<'fixed' | 'counting' | 'layered', string>> | undefined
  const stored = async () => {
    const names = { fixed: uniqueName('bad-open'), counting: uniqueName('bad-open'), layered: uniqueName('bad-open') }
    const base = { capacity: 100, errorRate: 0.01 }
    for (const [which, extra] of [['fixed', {}], ['counting', { counting: true }], ['layered', { growth: 2 }]] as const) {
      const filter = (await RedisBloomFilter.create(redis, names[which], { ...base, ...extra })) as Made
      await filter.add('k')
      await filter.close()
    }
    return names
  }
  afterAll(async () => {
    const names = await storedNames
    for (const name of Object.values(names ?? {})) await RedisBloomFilter.destroy(redis, name).catch(() => LayeredRedisFilter.destroy(redis, name))
  })

  prop([optionsOf(ALL), fc.constantFrom('fixed', 'counting', 'layered') as fc.Arbitrary<'fixed' | 'counting' | 'layered'>], { numRuns: 40 })(
    'RedisBloomFilter.open: every option checked, the kind asked for honoured',
    async (drawn, which) => {
      const names = await (storedNames ??= stored())
      const refused = refusalsOf(drawn, ALL, { extra: (given) => [...(valid(given, 'kind') && given.kind !== which ? ['kind'] : []), ...feedRefusals(given)] })
      const opened = await refusedOrHonoured(
        'RedisBloomFilter.open',
        () => RedisBloomFilter.open(redis, names[which], drawn.options as never) as Promise<Made>,
        refused,
        async (filter) => {
          expect(filter.kind).toBe(which)
          expect(await filter.has('k')).toBe(true)
        },
        ['BLOOM_INVALID_PARAMETER', 'BLOOM_INCOMPATIBLE'],
        (filter) => filter.close(),
      )
      await opened?.close()
    },
  )

  const importRules = { ...REDIS_RULES, clock, kind }
  let snapshotOnce: Promise<Uint8Array> | undefined
  const snapshotOf = async () => {
    const source = await RedisBloomFilter.create(redis, uniqueName('bad-import-source'), { capacity: 100, errorRate: 0.01 })
    await source.add('k')
    const bytes = await source.export()
    await source.destroy()
    return bytes
  }
  prop([optionsOf(importRules), fc.constantFrom<unknown>('snapshot', null, 42, 'text', new Uint8Array(3), detachedBytes())], { numRuns: 30 })(
    'RedisBloomFilter.import: every option checked, a snapshot or junk',
    async (drawn, drawnBytes) => {
      const snapshot = await (snapshotOnce ??= snapshotOf())
      const bytes = drawnBytes === 'snapshot' ? snapshot : drawnBytes
      const name = uniqueName('bad-import')
      const refused = refusalsOf(drawn, importRules, {
        extra: (given) => [...(bytes === snapshot ? [] : ['snapshot']), ...(valid(given, 'kind') && given.kind !== 'fixed' ? ['kind'] : []), ...feedRefusals(given)],
      })
      const imported = await refusedOrHonoured(
        'RedisBloomFilter.import',
        () => RedisBloomFilter.import(redis, name, bytes as never, drawn.options as never),
        refused,
        async (filter) => {
          expect(filter.kind).toBe('fixed')
          expect(await filter.has('k')).toBe(true)
        },
        ['BLOOM_INVALID_PARAMETER', 'BLOOM_INCOMPATIBLE', 'BLOOM_CORRUPT_SNAPSHOT'],
        (filter) => filter.destroy(),
      )
      if (imported !== undefined) await imported.destroy()
      else expect(await redis.keys(`${name}*`)).toEqual([])
    },
  )
})

describe('random arguments to the methods of Redis filters', () => {
  const open = async () => ({
    plain: await RedisBloomFilter.create(redis, uniqueName('bad-methods'), { capacity: 1000, errorRate: 0.01 }),
    countingFilter: await RedisCountingFilter.create(redis, uniqueName('bad-methods'), { capacity: 1000, errorRate: 0.01 }),
    layered: await LayeredRedisFilter.create(redis, uniqueName('bad-methods'), { capacity: 1000, errorRate: 0.01, growth: 2 }),
  })
  let filters: ReturnType<typeof open> | undefined
  afterAll(async () => {
    const made = await filters
    for (const filter of Object.values(made ?? {})) await filter.destroy()
  })

  prop([KEY, KEYS], { numRuns: 30 })('add, has, remove, addMany, hasMany, removeMany', async (key, drawn) => {
    const { plain, countingFilter, layered } = await (filters ??= open())
    await checkKeyCalls([plain, countingFilter, layered], countingFilter, key, drawn)
    const many = keysRefusal(drawn)
    await refusedOrHonoured('removeMany', () => countingFilter.removeMany(keysArgument(drawn) as never), many.refused, () => {}, many.codes)
    await refusedOrHonoured('addMany again', () => countingFilter.addMany(keysArgument(drawn) as never), many.refused, () => {}, many.codes)
  })

  prop([fc.constantFrom<unknown>({}, null, 7, 'filter', 'layered'), optionsOf({ force: REDIS_RULES.force })], { numRuns: 20 })('merge of anything but a filter; rebuild options', async (other, drawn) => {
    const { plain, layered } = await (filters ??= open())
    await expect(plain.merge((other === 'layered' ? layered : other) as never)).rejects.toThrow(refusal(/^merge: other must be/))
    await refusedOrHonoured('rebuild', () => plain.rebuild(['k'], drawn.options as never), refusalsOf(drawn, { force: REDIS_RULES.force }), async () => {
      expect(await plain.has('k')).toBe(true)
    })
  })
})

test('sizeFilter and sizeRedisFilter agree on what they refuse', () => {
  expect(() => sizeRedisFilter({ capacity: 1000, errorRate: 0.01, seed: null } as never)).toThrow(refusal(/^seed must be/))
  expect(() => sizeFilter({ capacity: 1000, errorRate: 0.01, ttl: 5 } as never)).toThrow(refusal(/unknown option "ttl"/))
})
