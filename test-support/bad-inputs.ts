import fc from 'fast-check'
import { expect } from 'vitest'

// Random arguments for every public option and argument (issue 33 items 13, 14, 17), and the
// oracle that says which of them a call must refuse. The oracle is written from the documented
// ranges, apart from the library's checks, so that a check that lets a value through (a null seed
// read as 0, a `counting: 1` read as false, an inherited option read unseen) or refuses a good one
// fails here. A call either refuses with a coded error naming what it refused, or succeeds and
// honours every value it was given: never a plain TypeError, never a silent default.

/** A Uint8Array whose buffer was transferred away: it reads as empty, and is no key. */
export function detachedBytes(): Uint8Array {
  const bytes = new Uint8Array([1, 2, 3])
  structuredClone(bytes.buffer, { transfer: [bytes.buffer] })
  return bytes
}

const DETACHED = detachedBytes()

/** An async iterable of keys: what addMany and friends cannot read. */
function asyncKeys(): AsyncIterable<string> {
  return (async function* () {
    yield 'a'
  })()
}

/**
 * Values wrong for almost every option and argument: the `null` that was read as "left out", booleans
 * that are not, strings that look like numbers, objects, functions, detached buffers. A few are right
 * for some option (0 is a seed, `true` a boolean option, a function a clock): the oracle decides by
 * rule, not by where a value came from.
 */
export const JUNK: readonly unknown[] = [
  null,
  undefined,
  Number.NaN,
  Infinity,
  -Infinity,
  -1,
  0,
  -0,
  0.5,
  1.5,
  2 ** 53,
  '',
  'yes',
  'true',
  '1000',
  'blocked',
  true,
  false,
  5n,
  Symbol('junk'),
  {},
  [],
  () => 0,
  asyncKeys(),
  DETACHED,
  new Uint8Array(2),
  new Uint16Array(2),
]

/** What an option takes: a rule, and values to try besides {@link JUNK} (right ones, and wrong ones near them). */
export interface OptionRule {
  readonly valid: (value: unknown) => boolean
  readonly values: readonly unknown[]
}

/** A rule's test: an integer from `min` to `max`. */
export const integer = (min: number, max: number) => (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
/** A rule's test: true or false, nothing that reads like one. */
export const boolean = (value: unknown) => typeof value === 'boolean'
const fraction = (value: unknown) => typeof value === 'number' && value > 0 && value < 1

/**
 * The rules of core's options, from the READMEs and JSDoc. Values are small, so that a valid draw
 * never builds a large filter (capacity 2^31 would allocate gigabytes): `capacity` up to 20 000,
 * `shards` up to 3, windows of 1 to 3 layers.
 */
export const CORE_RULES = {
  capacity: { valid: integer(1, Number.MAX_SAFE_INTEGER), values: [1, 7, 1000, 20_000, 1000.5, -1000, '1000'] },
  // Down to about 3.9e-20 (64 hashes); below, sizing refuses the rate (a layered filter sizes such
  // layers another way: see LAYERED_ERROR_RATE).
  errorRate: { valid: (value: unknown) => typeof value === 'number' && value >= 3.9e-20 && value < 1, values: [0.5, 0.01, 1e-6, 1e-12, 1e-300, 1, 1.01, -0.01, '0.01'] },
  shards: { valid: integer(1, 65_536), values: [1, 2, 3, 65_537, 2.5] },
  seed: { valid: integer(0, 0xffffffff), values: [0, 1, 0xffffffff, 123_456, 2 ** 32, -5, 1.25, '7'] },
  layout: { valid: (value: unknown) => value === 'blocked' || value === 'classic', values: ['blocked', 'classic', 'Blocked', 'dense'] },
  growth: { valid: integer(1, 65_536), values: [1, 2, 4, 65_537, 2.5] },
  tightening: { valid: fraction, values: [0.5, 0.9, 1, 0] },
  window: {
    valid: (value: unknown) => {
      if (value === null || typeof value !== 'object') return false
      if (Object.keys(value).some((name) => name !== 'seconds' && name !== 'keep')) return false
      if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return false
      const { seconds, keep } = value as { seconds?: unknown; keep?: unknown }
      return integer(1, 0xffffffff)(seconds) && integer(1, 65_536)(keep)
    },
    values: [{ seconds: 60, keep: 3 }, { seconds: 1, keep: 1 }, { seconds: 0, keep: 3 }, { seconds: 60, keep: null }, { seconds: 60, keep: 3, extra: 1 }, { seconds: 60 }],
  },
  clock: { valid: (value: unknown) => typeof value === 'function', values: [() => 1_700_000_000_000, 5, 'now'] },
  counting: { valid: boolean, values: [true, false, 1, 0, 'yes', 'false'] },
  kind: { valid: (value: unknown) => value === 'fixed' || value === 'layered' || value === 'counting', values: ['fixed', 'layered', 'counting', 'plain', 'Fixed'] },
} satisfies Record<string, OptionRule>

/**
 * A layered filter's `errorRate`: any in (0, 1), layers past 64 hashes are sized another way. Not
 * drawn below 1e-12: at 1e-300 a layer of 20 000 keys would take gigabytes.
 */
export const LAYERED_ERROR_RATE = { valid: fraction, values: [0.5, 0.01, 1e-6, 1e-12, 1, 1.01, -0.01, '0.01'] } satisfies OptionRule

const { capacity, shards, seed, layout, growth, tightening, window, clock, counting, kind } = CORE_RULES

/**
 * Core's sizing options as a backend's create (LevelDB, Redis) takes them. `errorRate` is never drawn
 * below 1e-12: the same create makes layered filters, which take any rate in (0, 1), and at 1e-300
 * their layers would take gigabytes.
 */
export const BACKEND_SIZING_RULES = { capacity, errorRate: { ...CORE_RULES.errorRate, values: LAYERED_ERROR_RATE.values }, shards, seed, layout } satisfies Record<string, OptionRule>

/** The options that make a backend's create layered. */
export const LAYERED_OPTION_RULES = { growth, tightening, window, clock } satisfies Record<string, OptionRule>

/** What a backend's create requires. */
export const CREATE_REQUIRED: readonly string[] = ['capacity', 'errorRate']

/** Every option of a backend's create: core's sizing and layered options, `counting`, `kind`, and the backend's own. */
export function backendRules<Own extends Record<string, OptionRule>>(own: Own) {
  return { ...BACKEND_SIZING_RULES, ...LAYERED_OPTION_RULES, counting, kind, ...own }
}

/** The names of `names` (an object of rules) that `given` holds a value for. */
export function present(given: Readonly<Record<string, unknown>>, names: object): string[] {
  return Object.keys(names).filter((name) => given[name] !== undefined)
}

/** Whether `given` holds a value for `name` that its rule in `rules` takes. */
export function givenValid(rules: Readonly<Record<string, OptionRule>>, given: Readonly<Record<string, unknown>>, name: string): boolean {
  return given[name] !== undefined && rules[name].valid(given[name])
}

/** What a backend's create makes of options whose values are right: counting, layered or fixed. */
export function madeBy(given: Readonly<Record<string, unknown>>): 'counting' | 'layered' | 'fixed' {
  if (given.counting === true) return 'counting'
  return present(given, LAYERED_OPTION_RULES).length > 0 ? 'layered' : 'fixed'
}

/**
 * A backend's create's own refusals, beyond each option's range, for the kind it makes: layered
 * options with `counting`, a `kind` it does not make, a layered filter without `growth` or `window`.
 */
export function kindRefusals(given: Readonly<Record<string, unknown>>, rules: Readonly<Record<string, OptionRule>>): string[] {
  const made = madeBy(given)
  const refused: string[] = []
  if (made === 'counting' && present(given, LAYERED_OPTION_RULES).length > 0) refused.push('counting', ...present(given, LAYERED_OPTION_RULES))
  if (givenValid(rules, given, 'kind') && given.kind !== made) refused.push('kind')
  if (made === 'layered' && given.growth === undefined && given.window === undefined) refused.push('growth')
  return refused
}

/** The rules of a filter's explicit parameters (`fromParameters`). */
export const PARAMETER_RULES = {
  bits: { valid: integer(8, 2 ** 48), values: [8, 512, 1024, 4096, 7, 12.5] },
  hashes: { valid: integer(1, 64), values: [1, 3, 7, 65] },
  shards: CORE_RULES.shards,
  seed: CORE_RULES.seed,
  layout: CORE_RULES.layout,
  scheme: { valid: (value: unknown) => value === 1 || value === 2 || value === 3, values: [1, 2, 3, 4] },
} satisfies Record<string, OptionRule>

/** Draws a value for `rule`: mostly a right one (so that calls also succeed), else a wrong one near it, junk, a small integer or null. */
export function valueOf(rule: OptionRule): fc.Arbitrary<unknown> {
  const right = rule.values.filter((value) => rule.valid(value))
  const wrong = rule.values.filter((value) => !rule.valid(value))
  return fc.oneof(
    // An option with no right value to draw (the guard's `cache` without a server) is only left out.
    ...(right.length > 0 ? [{ arbitrary: fc.constantFrom(...right), weight: 16 }] : []),
    ...(wrong.length > 0 ? [{ arbitrary: fc.constantFrom(...wrong), weight: 1 }] : []),
    { arbitrary: fc.constantFrom(...JUNK), weight: 1 },
    { arbitrary: fc.integer({ min: -2, max: 3 }), weight: 1 },
    // null on its own too: the value once read as "left out".
    { arbitrary: fc.constant(null), weight: 1 },
  )
}

/** A drawn options argument and what the oracle needs to know about how it was made. */
export interface OptionsCase {
  /** What is passed. */
  readonly options: unknown
  /** The values given, own and inherited alike (what a reader of `options.x` would see). */
  readonly given: Readonly<Record<string, unknown>>
  /** Names held only by the prototype. */
  readonly inherited: readonly string[]
  /** Names no rule knows (typos). */
  readonly unknown: readonly string[]
  /** Whether `options` is not an object at all. */
  readonly notObject: boolean
}

const NOT_OBJECTS = [null, undefined, 42, 'capacity', true, () => ({}), Symbol('options')]
const TYPOS = ['capcity', 'sead', 'frobnicate']

/**
 * Draws an options argument over `rules`: `required` names always given (mostly right), others
 * given now and then; now and then a name moved to the prototype, a typo added, or no object at all.
 * `base` values (a rotating filter's window, say) are given unless drawn otherwise.
 */
export function optionsOf(rules: Readonly<Record<string, OptionRule>>, { required = [], base = {} }: { required?: readonly string[]; base?: Readonly<Record<string, unknown>> } = {}): fc.Arbitrary<OptionsCase> {
  const names = Object.keys(rules)
  // About three optional names a draw however many there are, so that one wrong value is often the only one.
  const rolls = Math.max(3, Math.ceil(names.length / 3))
  const entry = (name: string) => {
    const drawn = valueOf(rules[name])
    const kept = name in base ? fc.oneof({ arbitrary: fc.constant(base[name]), weight: 3 }, { arbitrary: drawn, weight: 1 }) : drawn
    return required.includes(name) || name in base
      ? kept.map((value) => ({ present: true, value }))
      : fc.record({ present: fc.integer({ min: 0, max: rolls - 1 }).map((roll) => roll === 0), value: kept })
  }
  return fc
    .record({
      entries: fc.tuple(...names.map(entry)),
      inheritRolls: fc.array(fc.integer({ min: 0, max: 11 }), { minLength: names.length, maxLength: names.length }),
      typo: fc.oneof({ arbitrary: fc.constant(undefined), weight: 9 }, { arbitrary: fc.constantFrom(...TYPOS), weight: 1 }),
      notObject: fc.oneof({ arbitrary: fc.constant(undefined), weight: 19 }, { arbitrary: fc.constantFrom(...NOT_OBJECTS.map((value) => ({ value }))), weight: 1 }),
    })
    .map(({ entries, inheritRolls, typo, notObject }) => {
      if (notObject !== undefined) return { options: notObject.value, given: {}, inherited: [], unknown: [], notObject: true }
      const own: Record<string, unknown> = {}
      const proto: Record<string, unknown> = {}
      const given: Record<string, unknown> = {}
      names.forEach((name, i) => {
        const { present, value } = entries[i]
        if (!present) return
        given[name] = value
        // A name moved to the prototype is read by `options.name` but is not the object's own.
        if (inheritRolls[i] === 0 && value !== undefined) proto[name] = value
        else own[name] = value
      })
      if (typo !== undefined) own[typo] = 1
      const options = Object.keys(proto).length > 0 ? Object.assign(Object.create(proto), own) : own
      return { options, given, inherited: Object.keys(proto), unknown: typo === undefined ? [] : [typo], notObject: false }
    })
}

/**
 * The names (or `options`) a call must refuse for `drawn` under `rules`: no object, an unknown or
 * inherited name, a value its rule refuses, a required one left out; plus `extra(given)`, the call's
 * own refusals (a counting option to a fixed create, say). Empty: the call must succeed.
 */
export function refusalsOf(drawn: OptionsCase, rules: Readonly<Record<string, OptionRule>>, { required = [], extra }: { required?: readonly string[]; extra?: (given: Readonly<Record<string, unknown>>) => string[] } = {}): string[] {
  if (drawn.notObject) return ['options']
  const refused = [...drawn.unknown, ...drawn.inherited]
  for (const [name, value] of Object.entries(drawn.given)) {
    if (value === undefined ? required.includes(name) : !rules[name].valid(value)) refused.push(name)
  }
  for (const name of required) if (!(name in drawn.given)) refused.push(name)
  // A call may check its own refusals before or after the values: either name is a right answer.
  if (extra !== undefined) refused.push(...extra(drawn.given))
  return refused
}

/** A matcher for a coded BloomError (`BLOOM_INVALID_PARAMETER` unless told) whose message matches `pattern`. */
export const refusal = (pattern: RegExp, code = 'BLOOM_INVALID_PARAMETER') => expect.objectContaining({ name: 'BloomError', code, message: expect.stringMatching(pattern) })

/** Whether `error` is a bloomkit error (core's or the guard's) with one of `codes`. */
function coded(error: unknown, codes: readonly string[]): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown }
  return error instanceof Error && (name === 'BloomError' || name === 'GuardError') && typeof code === 'string' && codes.includes(code)
}

/**
 * Runs `call` and holds it to the oracle: with `refused` names it must throw or reject with one of
 * `codes`, its message naming one of them (`options` stands for the object as a whole); without, it
 * must succeed, and `honoured` checks what it returned. Resolves to the result, or undefined;
 * `release` closes a result that failed the checks.
 */
export async function refusedOrHonoured<T>(
  what: string,
  call: () => T | Promise<T>,
  refused: readonly string[],
  honoured: (result: T) => void | Promise<void>,
  codes: readonly string[] = ['BLOOM_INVALID_PARAMETER'],
  release?: (result: T) => unknown,
): Promise<T | undefined> {
  let result: T
  try {
    result = await call()
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    if (refused.length === 0) throw new Error(`${what}: expected success, got ${error instanceof Error ? error.name : typeof error}: ${message}`, { cause: error })
    expect(coded(error, codes), `${what}: expected a coded error (${codes.join(' or ')}) for ${refused.join(', ')}, got ${String(error)}`).toBe(true)
    const named = refused.map((name) => (name === 'options' ? 'option' : name))
    expect(
      named.some((name) => message.includes(name)),
      `${what}: the message should name one of ${refused.join(', ')}: ${message}`,
    ).toBe(true)
    return undefined
  }
  try {
    expect(refused, `${what}: expected a refusal of ${refused.join(', ')}, but it succeeded`).toEqual([])
    await honoured(result)
  } catch (error) {
    // A filter that holds a lock (a LevelDB folder) is released, so that the next runs, and the shrinking, see the failure itself.
    await release?.(result)
    throw error
  }
  return result
}

/** Keys to try: strings and byte keys (right), and {@link JUNK} (wrong but for strings). */
export const KEY: fc.Arbitrary<unknown> = fc.oneof({ arbitrary: fc.string({ maxLength: 6 }), weight: 3 }, { arbitrary: fc.uint8Array({ maxLength: 6 }), weight: 2 }, { arbitrary: fc.constantFrom(...JUNK), weight: 2 })

/** Whether a filter takes `key`: a string, or a Uint8Array whose buffer is not detached. */
export function validKey(key: unknown): boolean {
  if (typeof key === 'string') return true
  if (!(key instanceof Uint8Array)) return false
  return !(key.length === 0 && key === DETACHED)
}

/** An argument for addMany/hasMany/removeMany: a sync iterable of keys (array, Set, generator), or junk. */
export interface KeysCase {
  readonly keys: unknown
  /** The keys it holds when it is a sync iterable. */
  readonly list: readonly unknown[] | undefined
}

export const KEYS: fc.Arbitrary<KeysCase> = fc.oneof(
  { arbitrary: fc.array(KEY, { maxLength: 5 }).map((list) => ({ keys: list, list })), weight: 4 },
  { arbitrary: fc.array(KEY, { maxLength: 5 }).map((list) => ({ keys: new Set(list), list: [...new Set(list)] })), weight: 1 },
  {
    arbitrary: fc.array(KEY, { maxLength: 5 }).map((list) => ({
      keys: (function* () {
        yield* list
      })(),
      list,
    })),
    weight: 1,
  },
  // An array among the junk ([]) is a valid, empty list; a typed array is refused as keys (its elements are numbers).
  { arbitrary: fc.constantFrom(...JUNK, 'abc').map((keys) => ({ keys, list: Array.isArray(keys) ? keys : undefined })), weight: 2 },
)

/** The drawn keys argument for one call: a generator is read once, so each call gets a fresh iterator over what was drawn. */
export function keysArgument(drawn: KeysCase): unknown {
  return drawn.list === undefined || Array.isArray(drawn.keys) || drawn.keys instanceof Set ? drawn.keys : drawn.list.values()
}

/** What addMany/hasMany/removeMany must do with `drawn`: refuse the argument, refuse a key, or answer. */
export function keysRefusal(drawn: KeysCase): { readonly refused: string[]; readonly codes: string[] } {
  if (drawn.list === undefined) return { refused: ['keys'], codes: ['BLOOM_INVALID_PARAMETER'] }
  if (drawn.list.some((key) => !validKey(key))) return { refused: ['key'], codes: ['BLOOM_INVALID_KEY'] }
  return { refused: [], codes: [] }
}

/** The key calls every filter has, typed loosely: the oracle passes keys the types forbid. */
export interface KeyCalls {
  add(key: never): unknown
  has(key: never): unknown
  addMany(keys: never): unknown
  hasMany(keys: never): unknown
}

/** A counting filter's key calls. */
export interface CountingKeyCalls extends KeyCalls {
  remove(key: never): unknown
}

/**
 * Holds a drawn `key` and `drawn` keys to the oracle on each of `filters` (add, has, addMany, hasMany:
 * a key added is then present), then on `countingFilter` (one of them): remove of the key, and add
 * again so that it stays present for the next draw.
 */
export async function checkKeyCalls(filters: readonly KeyCalls[], countingFilter: CountingKeyCalls, key: unknown, drawn: KeysCase): Promise<void> {
  const refused = validKey(key) ? [] : ['key']
  const many = keysRefusal(drawn)
  for (const filter of filters) {
    await refusedOrHonoured('add', () => filter.add(key as never), refused, (answer) => expect(typeof answer).toBe('boolean'), ['BLOOM_INVALID_KEY'])
    await refusedOrHonoured('has', () => filter.has(key as never), refused, (answer) => expect(answer).toBe(true), ['BLOOM_INVALID_KEY'])
    await refusedOrHonoured('addMany', () => filter.addMany(keysArgument(drawn) as never), many.refused, (answers) => expect(answers).toHaveLength(drawn.list!.length), many.codes)
    await refusedOrHonoured('hasMany', () => filter.hasMany(keysArgument(drawn) as never), many.refused, (answers) => expect(answers).toEqual(drawn.list!.map(() => true)), many.codes)
  }
  await refusedOrHonoured('remove', () => countingFilter.remove(key as never), refused, (answer) => expect(answer).toBe(true), ['BLOOM_INVALID_KEY'])
  await refusedOrHonoured('add again', () => countingFilter.add(key as never), refused, () => {}, ['BLOOM_INVALID_KEY'])
}

/** A filter whose calls answer by a promise (LevelDB, Redis), typed loosely: the checks pass what the types forbid. */
export interface AsyncFilterCalls extends KeyCalls {
  merge(other: never): unknown
}

/**
 * Issue 33 item 17 on the filters of an async backend: addMany, hasMany and removeMany of null, a
 * number or an async iterable, merge({}), and a detached Uint8Array to add, has, remove, addMany and
 * hasMany each reject with a coded BloomError naming what they refused.
 */
export async function expectArgumentRefusals(plain: AsyncFilterCalls, counting: CountingKeyCalls & { removeMany(keys: never): unknown }): Promise<void> {
  const stream = (async function* () {})()
  for (const keys of [null, 42, stream]) {
    for (const call of [() => plain.addMany(keys as never), () => plain.hasMany(keys as never), () => counting.removeMany(keys as never)]) {
      await expect(call()).rejects.toThrow(refusal(/^keys must be an iterable/))
    }
  }
  await expect(plain.merge({} as never)).rejects.toThrow(refusal(/^merge: other must be/))
  const detached = detachedBytes()
  for (const call of [() => plain.add(detached as never), () => plain.has(detached as never), () => counting.remove(detached as never), () => plain.addMany([detached] as never), () => plain.hasMany([detached] as never)]) {
    await expect(call()).rejects.toThrow(refusal(/whose buffer is not detached/, 'BLOOM_INVALID_KEY'))
  }
}
