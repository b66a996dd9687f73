import fc from 'fast-check'
import { CacheGuard, type GuardFilter } from '@bloomkit/guard'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { describe, expect, test } from 'vitest'
import { detachedBytes, integer, JUNK, KEY, optionsOf, refusalsOf, refusedOrHonoured, validKey, type OptionRule } from '../../../test-support/bad-inputs.js'
import { prop } from '../../../test-support/property-test.js'

// Issue 33 items 13, 14 and 17 on the guard: every option of the constructor, warm and rebuild is
// checked for its type and range (null is not "left out", options are own properties), and every
// bad key is GUARD_INVALID_KEY, a detached Uint8Array included. No cache: the guard over a memory
// filter and a Map is enough to see what it accepts.

const ROWS = new Map([
  ['1', { id: '1' }],
  ['2', { id: '2' }],
])
const load = (id: string | Uint8Array) => ROWS.get(String(id)) ?? null

async function filled(): Promise<MemoryBloomFilter> {
  const filter = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
  filter.addMany([...ROWS.keys()])
  return filter
}

const refusal = (pattern: RegExp, code = 'GUARD_INVALID_OPTION') => expect.objectContaining({ name: 'GuardError', code, message: expect.stringMatching(pattern) })

describe('each item as found', () => {
  test('null options are refused, not defaults; options inherited from a prototype are refused', async () => {
    const filter = await filled()
    const base = { filter, load, name: 'users' }
    for (const [options, pattern] of [
      [{ ...base, ttl: null }, /^ttl must be a number of seconds from 0.001 to 315360000; got null$/],
      [{ ...base, lock: null }, /^lock must be true or false; got null$/],
      [{ ...base, cache: null }, /^cache must be an ioredis client or a GuardCache \(or left out for none\); got null$/],
      [{ ...base, l1: { max: 10, ttl: null } }, /^l1.ttl must be an integer from 1 to 86400000; got null$/],
      [Object.assign(Object.create({ ttl: 1 }), base), /^CacheGuard: options must be own properties, not inherited: ttl$/],
    ] as const) {
      expect(() => new CacheGuard(options as never)).toThrow(refusal(pattern))
    }
  })

  test('warm and rebuild check their options: null, unknown, inherited and non-object options are refused', async () => {
    const guard = new CacheGuard({ filter: await filled(), load, name: 'users' })
    await expect(guard.warm(['1'], { batchSize: null } as never)).rejects.toThrow(refusal(/^batchSize must be an integer from 1 to 1000000; got null$/))
    await expect(guard.warm(['1'], null as never)).rejects.toThrow(refusal(/^warm options must be an object; got null$/))
    await expect(guard.warm(['1'], { batchsize: 5 } as never)).rejects.toThrow(refusal(/^warm: unknown option "batchsize" \(did you mean "batchSize"\?\)/))
    await expect(guard.rebuild(['1'], Object.create({ into: undefined, batchSize: 5 }))).rejects.toThrow(refusal(/^rebuild: options must be own properties, not inherited: batchSize, into$/))
    await expect(guard.rebuild(['1'], { into: await MemoryBloomFilter.create({ capacity: 10, errorRate: 0.01 }), batchSize: 'all' } as never)).rejects.toThrow(refusal(/^batchSize must be/))
  })

  test('no message says "[object Object]": an object given or thrown is shown by its keys or its JSON (issue 37 item 2)', async () => {
    const filter = await filled()
    const base = { filter, load, name: 'users' }
    expect(() => new CacheGuard({ ...base, ttl: { seconds: 5 } } as never)).toThrow(refusal(/^ttl must be a number of seconds from 0.001 to 315360000; got an object \{ seconds \}$/))
    expect(() => new CacheGuard({ ...base, lock: {} } as never)).toThrow(refusal(/^lock must be true or false; got an empty object$/))
    expect(() => new CacheGuard({ ...base, lock: new Map() } as never)).toThrow(refusal(/^lock must be true or false; got a Map$/))
    await expect(new CacheGuard({ ...base, load: () => Promise.reject({ code: 'ECONNRESET' }) }).get('1')).rejects.toThrow(refusal(/^load\("1"\) failed: \{"code":"ECONNRESET"\}$/, 'GUARD_LOAD_FAILED'))
    await expect(new CacheGuard({ ...base, load: () => Promise.reject({ message: 'no such table' }) }).get('1')).rejects.toThrow(refusal(/^load\("1"\) failed: no such table$/, 'GUARD_LOAD_FAILED'))
    await expect(new CacheGuard({ ...base, load: () => Promise.reject('down') }).get('2')).rejects.toThrow(refusal(/^load\("2"\) failed: down$/, 'GUARD_LOAD_FAILED'))
    await expect(new CacheGuard({ ...base }).get({ id: 1 } as never)).rejects.toThrow(refusal(/got an object \{ id \}$/, 'GUARD_INVALID_KEY'))
  })

  test('a Uint8Array whose buffer was detached is GUARD_INVALID_KEY, not the empty key', async () => {
    const guard = new CacheGuard({ filter: await filled(), load, name: 'users' })
    const detached = detachedBytes()
    for (const call of [() => guard.get(detached), () => guard.getMany([detached]), () => guard.created(detached), () => guard.invalidate(detached), () => guard.warm([detached])]) {
      await expect(call()).rejects.toThrow(refusal(/whose buffer is not detached/, 'GUARD_INVALID_KEY'))
    }
  })
})

// --- Random values ------------------------------------------------------------------------------

const seconds = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0.001 && value <= 315_360_000
const isFunction = (value: unknown) => typeof value === 'function'
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

const l1Valid = (value: unknown) => {
  if (value === false) return true
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false
  if (Object.keys(value).some((name) => name !== 'max' && name !== 'ttl')) return false
  const { max, ttl } = value as { max?: unknown; ttl?: unknown }
  return integer(1, 100_000_000)(max) && (ttl === undefined || integer(1, 86_400_000)(ttl))
}

/** The guard's options, from its README; `filter`, `load` and `name` are required. */
function guardRules(filter: GuardFilter, closed: GuardFilter): Record<string, OptionRule> {
  return {
    filter: { valid: (value) => value === filter, values: [filter, closed, { has: 1 }] },
    load: { valid: isFunction, values: [load, 'load'] },
    name: { valid: (value) => typeof value === 'string' && value.length >= 1 && value.length <= 200 && !/[{}]/.test(value) && !LONE_SURROGATE.test(value), values: ['users', 'a:b', '', 'a{b}', 'x'.repeat(201), '\ud800'] },
    // No cache server here: a cache is only ever left out, or wrong.
    cache: { valid: () => false, values: [{}, 'redis://'] },
    ttl: { valid: seconds, values: [300, 0.5, 0, Infinity] },
    nullTtl: { valid: seconds, values: [30, 0.001, -1] },
    jitter: { valid: (value) => typeof value === 'number' && value >= 0 && value <= 0.5, values: [0, 0.1, 0.5, 0.6] },
    serialize: { valid: isFunction, values: [JSON.stringify, 'json'] },
    deserialize: { valid: isFunction, values: [JSON.parse, 'json'] },
    onFilterError: { valid: (value) => value === 'load' || value === 'reject', values: ['load', 'reject', 'ignore'] },
    filterTimeout: { valid: integer(1, 60_000), values: [1000, 60_001] },
    cacheTimeout: { valid: integer(1, 60_000), values: [250, 0] },
    cooldown: { valid: integer(0, 60_000), values: [0, 1000, 1.5] },
    lock: { valid: (value) => typeof value === 'boolean', values: [true, false, 'yes'] },
    loadTimeout: { valid: integer(1, 600_000), values: [5000, 600_001] },
    lockTtl: { valid: integer(10, 600_000), values: [5000, 9] },
    lockWait: { valid: integer(0, 60_000), values: [0, 1000, -1] },
    l1: { valid: l1Valid, values: [false, { max: 10 }, { max: 10, ttl: 100 }, { max: 0 }, { maxx: 1 }, true, { max: 10, ttl: null }] },
  }
}

describe('random values at every option and argument of the guard', () => {
  // Made synchronously, so that the rules (which name them) exist when the properties are defined.
  const filter = MemoryBloomFilter.fromParametersSync({ bits: 8192, hashes: 7, shards: 1, seed: 1 })
  filter.addMany([...ROWS.keys()])
  const closed = MemoryBloomFilter.fromParametersSync({ bits: 8192, hashes: 7, shards: 1, seed: 1 })
  closed.close()
  const rules = guardRules(filter, closed)
  const required = ['filter', 'load', 'name']

  prop([optionsOf(rules, { required, base: { filter, load, name: 'users' } })], { numRuns: 200 })('new CacheGuard(options)', async (drawn) => {
    const guard = await refusedOrHonoured('new CacheGuard', () => new CacheGuard(drawn.options as never), refusalsOf(drawn, rules, { required }), async (made) => {
      // Honoured: the guard answers from the filter and the load.
      expect(await made.get('1')).toEqual({ id: '1' })
      expect(await made.get('nope')).toBeNull()
    }, ['GUARD_INVALID_OPTION'])
    await guard?.close()
  })

  prop([KEY, fc.array(KEY, { maxLength: 4 }), fc.constantFrom<unknown>(undefined, ...JUNK)], { numRuns: 150 })('get, getMany, created, invalidate and warm of random keys', async (key, keys, batchSize) => {
    const guard = new CacheGuard({ filter, load, name: 'users' })
    const refused = validKey(key) ? [] : ['key']
    await refusedOrHonoured('get', () => guard.get(key as string), refused, (value) => expect(value).toEqual(load(key as string)), ['GUARD_INVALID_KEY'])
    await refusedOrHonoured('created', () => guard.created(key as string), refused, () => {}, ['GUARD_INVALID_KEY'])
    await refusedOrHonoured('invalidate', () => guard.invalidate(key as string), refused, () => {}, ['GUARD_INVALID_KEY'])
    const manyRefused = keys.every(validKey) ? [] : ['key']
    await refusedOrHonoured('getMany', () => guard.getMany(keys as string[]), manyRefused, (values) => expect(values).toEqual(keys.map((one) => load(one as string))), ['GUARD_INVALID_KEY'])
    const batchRefused = batchSize === undefined || integer(1, 1_000_000)(batchSize) ? [] : ['batchSize']
    await refusedOrHonoured('warm', () => guard.warm(keys as string[], { batchSize } as never), [...batchRefused, ...manyRefused], (added) => expect(added).toBe(keys.length), ['GUARD_INVALID_OPTION', 'GUARD_INVALID_KEY'])
    await guard.close()
  })
})
