import { existsSync } from 'node:fs'
import fc from 'fast-check'
import { sizeFilter, type FilterParameters } from '@bloomkit/core'
import { CountingLevelFilter, LayeredLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { afterAll, describe, expect, test } from 'vitest'
import { BACKEND_SIZING_RULES, backendRules, boolean, checkKeyCalls, CORE_RULES, CREATE_REQUIRED, detachedBytes, expectArgumentRefusals, givenValid, integer, KEY, KEYS, kindRefusals, madeBy, optionsOf, present, refusal, refusalsOf, refusedOrHonoured, type OptionRule } from '../../../test-support/bad-inputs.js'
import { prop } from '../../../test-support/property-test.js'
import { tempFolders } from './support/temp-folders.js'

// Issue 33 items 13, 14 and 17 on LevelDB filters: every option of create, open and import is
// checked for its type and range before the folder is touched, whatever the call does with it, and
// every bad argument gets a coded error. First each item as found, then random values (fewer runs
// than memory: each create opens a LevelDB).

const folders = tempFolders('bloomkit-bad-inputs-')
afterAll(() => folders.removeAll())

describe('each item as found', () => {
  test('item 13: seed: null is refused by create (fixed, counting, layered), and no folder is made', async () => {
    for (const extra of [{}, { counting: true }, { growth: 2 }]) {
      const where = folders.path()
      await expect(LevelBloomFilter.create(where, { capacity: 1000, errorRate: 0.01, seed: null, ...extra } as never)).rejects.toThrow(refusal(/^seed must be an integer from 0 to 4294967295; got null$/))
      expect(existsSync(where)).toBe(false)
    }
  })

  test('item 14: counting 1, "yes", 0 and null are refused, not a plain filter', async () => {
    for (const counting of [1, 'yes', 0, null]) {
      const where = folders.path()
      await expect(LevelBloomFilter.create(where, { capacity: 1000, errorRate: 0.01, counting } as never)).rejects.toThrow(refusal(/^counting must be true or false; got /))
      expect(existsSync(where)).toBe(false)
    }
  })

  test('item 17: null store options, inherited options, a kind create does not make, a clock for open: refused before the folder is touched', async () => {
    const base = { capacity: 1000, errorRate: 0.01 }
    for (const [options, pattern] of [
      [{ ...base, sync: null }, /^sync must be true or false; got null$/],
      [{ ...base, pageBytes: null }, /^pageBytes must be a power of two from 1024 to 1048576; got null$/],
      [{ ...base, cacheBytes: 1 }, /^cacheBytes must be an integer from 65536 to /],
      [{ ...base, growth: 2, cacheBytes: 1 }, /^cacheBytes must be an integer from 65536 to /],
      [{ ...base, kind: 'layered' }, /^kind must be 'fixed' or left out: these options make a fixed filter/],
      [Object.assign(Object.create({ sync: true }), base), /options must be own properties, not inherited: sync$/],
    ] as const) {
      const where = folders.path()
      await expect(LevelBloomFilter.create(where, options as never)).rejects.toThrow(refusal(pattern))
      expect(existsSync(where)).toBe(false)
    }
    const where = folders.path()
    await (await LevelBloomFilter.create(where, base)).close()
    // An open checks every option it is given, even one a fixed filter does not use.
    await expect(LevelBloomFilter.open(where, { clock: 5 } as never)).rejects.toThrow(refusal(/^clock must be a function/))
    await expect(LevelBloomFilter.open(where, { pageBytes: 'big' } as never)).rejects.toThrow(refusal(/^pageBytes must be/))
    await expect(LevelBloomFilter.open(where, null as never)).rejects.toThrow(refusal(/options must be an object; got null$/))
  })

  test('item 17: addMany/hasMany/removeMany of null, a number or an async iterable, merge({}), a detached key: coded', async () => {
    const plain = await LevelBloomFilter.create(folders.path(), { capacity: 1000, errorRate: 0.01 })
    const counting = await CountingLevelFilter.create(folders.path(), { capacity: 1000, errorRate: 0.01 })
    try {
      await expectArgumentRefusals(plain, counting)
    } finally {
      await plain.close()
      await counting.close()
    }
  })
})

// --- Random values ------------------------------------------------------------------------------

const isPowerOfTwo = (value: unknown) => integer(1024, 1 << 20)(value) && ((value as number) & ((value as number) - 1)) === 0

/** The store's options, from the README. */
const STORE_RULES = {
  cacheBytes: { valid: integer(1, 2 ** 31), values: [1 << 20, 64 << 20, 4096, 0, 2 ** 31 + 1, 1.5] },
  sync: { valid: boolean, values: [true, false, 1, 'yes'] },
  checkpointBytes: { valid: integer(65_536, Number.MAX_SAFE_INTEGER), values: [65_536, 1 << 25, 1000, 0] },
  pageBytes: { valid: isPowerOfTwo, values: [1024, 16_384, 1000, 3000, 2 ** 21] },
} satisfies Record<string, OptionRule>

const { clock, kind } = CORE_RULES
const ALL = backendRules(STORE_RULES)
const valid = (given: Readonly<Record<string, unknown>>, name: keyof typeof ALL) => givenValid(ALL, given, name)

/** create's own refusals, beyond each option's range: what the kind it makes cannot take. */
function createRefusals(given: Readonly<Record<string, unknown>>): string[] {
  const refused = kindRefusals(given, ALL)
  // A page cache holds at least 4 pages (a counting filter has no page cache).
  const pageBytes = valid(given, 'pageBytes') ? (given.pageBytes as number) : 16_384
  if (madeBy(given) !== 'counting' && valid(given, 'cacheBytes') && (given.cacheBytes as number) < 4 * pageBytes) refused.push('cacheBytes')
  return refused
}

function expectSizedBy(parameters: FilterParameters, given: Readonly<Record<string, unknown>>): void {
  const sizing = Object.fromEntries(present(given, BACKEND_SIZING_RULES).map((name) => [name, given[name]]))
  expect(parameters).toEqual({ ...sizeFilter(sizing as never), seed: sizing.seed === undefined ? parameters.seed : sizing.seed })
}

type Made = LevelBloomFilter | CountingLevelFilter | LayeredLevelFilter

describe('random values at every option of create, open and import (LevelDB)', () => {
  prop([optionsOf(ALL, { required: CREATE_REQUIRED })], { numRuns: 40 })('LevelBloomFilter.create', async (drawn) => {
    const where = folders.path()
    const refused = refusalsOf(drawn, ALL, { required: CREATE_REQUIRED, extra: createRefusals })
    // The first add of a layered filter makes its first layer: part of the call, for a budget too small for its pages.
    const made = await refusedOrHonoured(
      'LevelBloomFilter.create',
      async () => {
        const filter = (await LevelBloomFilter.create(where, drawn.options as never)) as Made
        await filter.add('k').catch(async (error: unknown) => {
          await filter.close()
          throw error
        })
        return filter
      },
      refused,
      async (filter) => {
        const given = drawn.given as Record<string, never>
        expect(filter.kind).toBe(madeBy(given))
        expect(await filter.has('k')).toBe(true)
        if (filter instanceof LevelBloomFilter) {
          expectSizedBy(filter.parameters, given)
          expect(filter.bitStore.pageBytes).toBe(given.pageBytes ?? 16_384)
          expect(filter.bitStore.sync).toBe(given.sync ?? false)
        } else if (filter instanceof CountingLevelFilter) {
          expectSizedBy(filter.parameters, given)
        } else {
          expect(filter.policy).toMatchObject({ capacity: given.capacity, errorRate: given.errorRate, growth: given.growth ?? 0, tightening: given.tightening ?? 0.5 })
          if (given.seed !== undefined) expect(filter.policy.seed).toBe(given.seed)
        }
      },
      undefined,
      (filter) => filter.close(),
    )
    await made?.close()
    // Nothing half-written: a refused create leaves no folder.
    if (made === undefined) expect(existsSync(where)).toBe(false)
  })

  const stored = async () => {
    const made = { fixed: folders.path(), counting: folders.path(), layered: folders.path() }
    const base = { capacity: 100, errorRate: 0.01, pageBytes: 1024 }
    await (await LevelBloomFilter.create(made.fixed, base)).close()
    await (await LevelBloomFilter.create(made.counting, { ...base, counting: true })).close()
    const layered = await LevelBloomFilter.create(made.layered, { ...base, growth: 2 })
    await layered.add('k')
    await layered.close()
    return made
  }

  let storedFolders: ReturnType<typeof stored> | undefined
  const openRules = { ...ALL }
  prop([optionsOf(openRules), fc.constantFrom('fixed', 'counting', 'layered') as fc.Arbitrary<'fixed' | 'counting' | 'layered'>], { numRuns: 40 })(
    'LevelBloomFilter.open: every option checked, the kind asked for honoured',
    async (drawn, which) => {
        const made = await (storedFolders ??= stored())
        const given = drawn.given
        const refused = refusalsOf(drawn, openRules, {
          extra: () => [
            ...(valid(given, 'kind') && given.kind !== which ? ['kind'] : []),
            // Pages of 1 KiB: at least 4 KiB of cache (the counting filter has no page cache).
            ...(which !== 'counting' && valid(given, 'cacheBytes') && (given.cacheBytes as number) < 4096 ? ['cacheBytes'] : []),
          ],
        })
        const opened = await refusedOrHonoured(
          'LevelBloomFilter.open',
          async () => {
            const filter = (await LevelBloomFilter.open(made[which], drawn.options as never)) as Made
            await Promise.resolve(filter.has('k')).catch(async (error: unknown) => {
              await filter.close()
              throw error
            })
            return filter
          },
          refused,
          (filter) => {
            expect(filter.kind).toBe(which)
            if (filter instanceof LevelBloomFilter) expect(filter.bitStore.sync).toBe(given.sync ?? false)
          },
          ['BLOOM_INVALID_PARAMETER', 'BLOOM_INCOMPATIBLE'],
          (filter) => filter.close(),
        )
        await opened?.close()
    },
  )

  const importRules = { ...STORE_RULES, clock, kind }
  let snapshotOnce: Promise<Uint8Array> | undefined
  const snapshotOf = async () => {
    const source = await LevelBloomFilter.create(folders.path(), { capacity: 100, errorRate: 0.01 })
    await source.add('k')
    const bytes = await source.export()
    await source.close()
    return bytes
  }
  prop([optionsOf(importRules), fc.constantFrom<unknown>('snapshot', null, 42, 'text', new Uint8Array(3), detachedBytes())], { numRuns: 30 })(
    'LevelBloomFilter.import: every option checked, a snapshot or junk',
    async (drawn, drawnBytes) => {
        const snapshot = await (snapshotOnce ??= snapshotOf())
        const bytes = drawnBytes === 'snapshot' ? snapshot : drawnBytes
        const given = drawn.given
        const where = folders.path()
        const refused = refusalsOf(drawn, importRules, {
          extra: () => [
            ...(bytes === snapshot ? [] : ['snapshot']),
            ...(valid(given, 'kind') && given.kind !== 'fixed' ? ['kind'] : []),
            ...(valid(given, 'cacheBytes') && (given.cacheBytes as number) < 4 * (valid(given, 'pageBytes') ? (given.pageBytes as number) : 16_384) ? ['cacheBytes'] : []),
          ],
        })
        const imported = await refusedOrHonoured('LevelBloomFilter.import', () => LevelBloomFilter.import(where, bytes as never, drawn.options as never), refused, async (filter) => {
          expect(filter.kind).toBe('fixed')
          expect(await filter.has('k')).toBe(true)
        }, ['BLOOM_INVALID_PARAMETER', 'BLOOM_INCOMPATIBLE', 'BLOOM_CORRUPT_SNAPSHOT'], (filter) => filter.close())
        await imported?.close()
        if (imported === undefined) expect(existsSync(where)).toBe(false)
    },
  )
})

describe('random arguments to the methods of LevelDB filters', () => {
  const open = async () => ({
    plain: await LevelBloomFilter.create(folders.path(), { capacity: 1000, errorRate: 0.01 }),
    countingFilter: await LevelBloomFilter.create(folders.path(), { capacity: 1000, errorRate: 0.01, counting: true }),
    layered: await LevelBloomFilter.create(folders.path(), { capacity: 1000, errorRate: 0.01, growth: 2 }),
  })
  let filters: ReturnType<typeof open> | undefined
  afterAll(async () => {
    const made = await filters
    await Promise.all(Object.values(made ?? {}).map((filter) => filter.close()))
  })

  prop([KEY, KEYS], { numRuns: 30 })('add, has, remove, addMany, hasMany and removeMany', async (key, drawn) => {
    const { plain, countingFilter, layered } = await (filters ??= open())
    await checkKeyCalls([plain, countingFilter, layered], countingFilter, key, drawn)
  })

  prop([fc.constantFrom<unknown>({}, null, 7, 'filter', 'layered')], { numRuns: 10 })('merge of anything but a filter', async (other) => {
    const { plain, layered } = await (filters ??= open())
    await expect(plain.merge((other === 'layered' ? layered : other) as never)).rejects.toThrow(refusal(/^merge: other must be/))
  })
})
