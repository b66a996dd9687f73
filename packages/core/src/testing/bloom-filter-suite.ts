import { BloomFilter } from '../bloom-filter.js'
import { BloomError } from '../errors.js'
import { createKeyHasher, type BloomKey } from '../hashing/key-hasher.js'
import { sameParameters, type FilterParameters } from '../parameters.js'
import { decodeSnapshot } from '../format/snapshot.js'
import { ReferenceBitStore } from './reference-bit-store.js'
import { caught, check, checkBytes, type TestFunction } from './suite-support.js'

/** Inputs of {@link bloomFilterSuite}. */
export interface BloomFilterSuiteOptions {
  /** Registers one test; pass your runner's `test`. */
  readonly test: TestFunction
  /**
   * A new, empty filter with exactly these parameters, isolated from every other filter it has
   * made (its own folder, its own Redis name). The suite closes it.
   */
  readonly factory: (parameters: FilterParameters) => BloomFilter | Promise<BloomFilter>
  /** Runs after each test with the filters it made (already closed), e.g. to delete their data. */
  readonly cleanup?: (filters: BloomFilter[]) => void | Promise<void>
  /** Per-test timeout in ms, for filters behind a network. */
  readonly timeout?: number
  /** Prefix of the test names. Default: 'BloomFilter'. */
  readonly name?: string
}

/**
 * Every hash scheme (blocked; classic as new filters place it; classic scheme 1, which filters of
 * earlier releases keep), small enough for any store, large enough to spread keys over every shard.
 */
const LAYOUTS: readonly FilterParameters[] = [
  { bits: 4 * 8 * 512, hashes: 5, shards: 4, seed: 7, layout: 'blocked', scheme: 2 },
  { bits: 4 * 8 * 512, hashes: 5, shards: 4, seed: 7, layout: 'classic', scheme: 3 },
  { bits: 4 * 8 * 512, hashes: 5, shards: 4, seed: 7, layout: 'classic', scheme: 1 },
]

const keysOf = (prefix: string, count: number): BloomKey[] =>
  Array.from({ length: count }, (_, i) => (i % 5 === 4 ? new TextEncoder().encode(`${prefix}${i}`) : `${prefix}${i}`))

/** The same parameters over the reference store: the filter every backend must agree with bit for bit. */
async function referenceFilter(parameters: FilterParameters): Promise<BloomFilter<false>> {
  return new BloomFilter(new ReferenceBitStore(parameters), await createKeyHasher(parameters.seed))
}

/**
 * The whole `BloomFilter` API over a backend, as tests (keyv's `keyvTestSuite` beside its storage
 * suite): what `bitStoreSuite` checks for a store, this checks for the filter a backend builds on
 * it, hooks included. Every backend runs it with a few lines; it needs no particular test runner.
 *
 * @example
 * import { test } from 'vitest'
 * bloomFilterSuite({ test, factory: (parameters) => MemoryBloomFilter.fromParameters(parameters) })
 */
export function bloomFilterSuite(options: BloomFilterSuiteOptions): void {
  const { test, factory, cleanup, timeout, name = 'BloomFilter' } = options

  const withFilters = (title: string, body: (make: (p: FilterParameters) => Promise<BloomFilter>) => Promise<void>) => {
    test(
      `${name}: ${title}`,
      async () => {
        const filters: BloomFilter[] = []
        const make = async (parameters: FilterParameters) => {
          const filter = await factory(parameters)
          filters.push(filter)
          check(sameParameters(filter.parameters, parameters), `the factory must make a filter with the parameters it was given`)
          return filter
        }
        try {
          await body(make)
        } finally {
          for (const filter of filters) await filter.close()
          await cleanup?.(filters)
        }
      },
      timeout,
    )
  }

  for (const parameters of LAYOUTS) {
    const layout = `${parameters.layout} (scheme ${parameters.scheme})`
    withFilters(`${layout}: add reports new keys, has finds every added key, and both agree with addMany/hasMany`, async (make) => {
      const filter = await make(parameters)
      const keys = keysOf('k', 300)
      check((await filter.add(keys[0])) === true, 'the first add of a key into an empty filter is new')
      check((await filter.add(keys[0])) === false, 'adding the same key again is not new')
      check((await filter.add(new TextEncoder().encode(keys[0] as string))) === false, 'a string and its UTF-8 bytes are the same key')
      const added = await filter.addMany(keys.slice(1))
      check(added.length === keys.length - 1, `addMany answers once per key: expected ${keys.length - 1}, got ${added.length}`)
      for (const key of keys) check((await filter.has(key)) === true, `no false negative: ${String(key)} was added`)
      const found = await filter.hasMany(keys)
      check(found.length === keys.length && found.every(Boolean), 'hasMany finds every added key, in order')
      check((await filter.addMany(keys)).every((fresh) => !fresh), 'addMany of added keys reports none as new')
      const probes = keysOf('absent', 300)
      const answers = await filter.hasMany(probes)
      for (let i = 0; i < probes.length; i++) check(answers[i] === (await filter.has(probes[i])), 'hasMany answers as has does, key by key')
      check(answers.filter(Boolean).length < 60, 'absent keys mostly read absent (about 1 % false positives expected here)')
    })

    withFilters(`${layout}: batches of every size, arrays and iterables, one call after another, keep every key`, async (make) => {
      // Batch buffers are sized by an array's length and reused between calls: a short call, then
      // longer ones (past two batches of 16 384), then a generator, must all land whole.
      const filter = await make(parameters)
      const sizes = [3, 1, 40_000, 16_384, 16_385]
      const all: BloomKey[] = []
      for (const [i, size] of sizes.entries()) {
        const keys = keysOf(`size${i}-`, size)
        const added = await filter.addMany(keys)
        check(added.length === size, `addMany of ${size} keys answers ${size} times, got ${added.length}`)
        all.push(...keys)
      }
      const generated = keysOf('generated', 20_000)
      check((await filter.addMany((function* () { yield* generated })())).length === generated.length, 'addMany of a generator answers once per key')
      all.push(...generated)
      for (const size of [1, 1000, all.length]) {
        const found = await filter.hasMany(all.slice(0, size))
        check(found.length === size && found.every(Boolean), `hasMany of ${size} added keys finds every one`)
      }
    })

    withFilters(`${layout}: sets exactly the bits the reference filter sets, by add and by addMany`, async (make) => {
      const filter = await make(parameters)
      const reference = await referenceFilter(parameters)
      const single = keysOf('one', 200)
      const batch = keysOf('many', 2_000)
      for (const key of single) {
        const answer = await filter.add(key)
        check(answer === (await reference.add(key)), `add(${String(key)}) answers as the reference does`)
      }
      const answers = await filter.addMany(batch)
      const expected = await reference.addMany(batch)
      check(JSON.stringify(answers) === JSON.stringify(expected), 'addMany answers as the reference does')
      checkBytes(await filter.export(), await reference.export(), 'the snapshot after the same adds')
    })
  }

  const [parameters] = LAYOUTS

  withFilters('isSync tells whether methods return Promises', async (make) => {
    const filter = await make(parameters)
    const result = filter.has('k')
    check(filter.isSync === !(result instanceof Promise), 'isSync must match the type of the results')
    await result
  })

  withFilters('estimateCount, errorRate and countSetBits follow the fill; clear empties the filter', async (make) => {
    const filter = await make(parameters)
    check((await filter.estimateCount()) === 0, 'an empty filter counts 0')
    check((await filter.errorRate()) === 0, 'an empty filter has no false positives')
    const empty = await filter.countSetBits()
    check(empty.length === parameters.shards && empty.every((count) => count === 0), `countSetBits of an empty filter: got ${JSON.stringify(empty)}`)
    const keys = keysOf('c', 400)
    await filter.addMany(keys)
    const count = await filter.estimateCount()
    check(count > 360 && count < 440, `estimateCount after 400 keys: got ${count}`)
    const rate = await filter.errorRate()
    check(rate > 0 && rate < 0.1, `errorRate after 400 keys: got ${rate}`)
    // Each key sets at most k bits; with 400 keys in this filter, about k per key are new.
    const set = await filter.countSetBits()
    const total = set.reduce((sum, bits) => sum + bits, 0)
    check(set.length === parameters.shards && set.every((bits) => bits > 0), `countSetBits after 400 keys: one count per shard, each above 0; got ${JSON.stringify(set)}`)
    check(total > 400 * parameters.hashes * 0.8 && total <= 400 * parameters.hashes, `countSetBits after 400 keys: ${total} bits set of at most ${400 * parameters.hashes}`)
    await filter.clear()
    check((await filter.estimateCount()) === 0, 'estimateCount after clear')
    check((await filter.countSetBits()).every((bits) => bits === 0), 'countSetBits after clear')
    check(!(await filter.hasMany(keys)).some(Boolean), 'no key reads present after clear')
  })

  withFilters('export is a valid snapshot of these parameters; exportChunks streams the same bytes', async (make) => {
    const filter = await make(parameters)
    await filter.addMany(keysOf('e', 500))
    const snapshot = await filter.export()
    const decoded = decodeSnapshot(snapshot)
    check(sameParameters(decoded.parameters, parameters), 'the snapshot carries the filter parameters')
    const pieces: Uint8Array[] = []
    for await (const piece of filter.exportChunks()) pieces.push(piece)
    const streamed = new Uint8Array(pieces.reduce((n, piece) => n + piece.length, 0))
    pieces.reduce((at, piece) => (streamed.set(piece, at), at + piece.length), 0)
    checkBytes(streamed, snapshot, 'exportChunks joined')
  })

  withFilters('merge ORs in a filter of the same parameters and refuses others with BLOOM_INCOMPATIBLE', async (make) => {
    const filter = await make(parameters)
    const other = await referenceFilter(parameters)
    await filter.addMany(keysOf('mine', 100))
    await other.addMany(keysOf('theirs', 100))
    await filter.merge(other)
    check((await filter.hasMany([...keysOf('mine', 100), ...keysOf('theirs', 100)])).every(Boolean), 'after merge both sets of keys are present')
    const stranger = await referenceFilter({ ...parameters, seed: parameters.seed + 1 })
    const error = await caught(() => filter.merge(stranger), 'merging a filter with another seed')
    check(error instanceof BloomError && error.code === 'BLOOM_INCOMPATIBLE', `expected BLOOM_INCOMPATIBLE, got ${String(error)}`)
  })

  withFilters('bad keys are BLOOM_INVALID_KEY and a non-iterable of keys BLOOM_INVALID_PARAMETER', async (make) => {
    const filter = await make(parameters)
    // A Uint8Array whose buffer was transferred reads as empty: it must not be taken as the key ''.
    const detached = new Uint8Array([1, 2, 3])
    structuredClone(detached.buffer, { transfer: [detached.buffer] })
    for (const [what, call] of [
      ['add(42)', () => filter.add(42 as unknown as BloomKey)],
      ['has(null)', () => filter.has(null as unknown as BloomKey)],
      ["addMany(['ok', {}])", () => filter.addMany(['ok', {} as unknown as BloomKey])],
      ['add(detached)', () => filter.add(detached)],
      ['has(detached)', () => filter.has(detached)],
      ['hasMany([detached])', () => filter.hasMany([detached])],
    ] as const) {
      const error = await caught(call, what)
      check(error instanceof BloomError && error.code === 'BLOOM_INVALID_KEY', `${what}: expected BLOOM_INVALID_KEY, got ${String(error)}`)
      rejectsWhenAsync(filter, call, what)
    }
    const stream = (async function* () {})()
    for (const [what, call] of [
      ['addMany(7)', () => filter.addMany(7 as unknown as Iterable<BloomKey>)],
      ['addMany(null)', () => filter.addMany(null as unknown as Iterable<BloomKey>)],
      ['hasMany(undefined)', () => filter.hasMany(undefined as unknown as Iterable<BloomKey>)],
      ['hasMany(an async iterable)', () => filter.hasMany(stream as unknown as Iterable<BloomKey>)],
    ] as const) {
      const error = await caught(call, what)
      check(error instanceof BloomError && error.code === 'BLOOM_INVALID_PARAMETER' && error.message.includes('keys'), `${what}: expected BLOOM_INVALID_PARAMETER naming keys, got ${String(error)}`)
      rejectsWhenAsync(filter, call, what)
    }
  })

  withFilters('addMany whose input fails midway rejects with that error; keys after the failure are not added', async (make) => {
    const filter = await make(parameters)
    const failure = new Error('the source failed')
    const before = keysOf('before', 50)
    const after = keysOf('after', 50)
    function* failing(): Generator<BloomKey> {
      yield* before
      throw failure
    }
    const error = await caught(() => filter.addMany(failing()), 'addMany of a failing iterable')
    check(error === failure, `the iterable's own error must come out unchanged; got ${String(error)}`)
    check(!(await filter.hasMany(after)).some(Boolean), 'keys never read were not added')
    // The rule for keys before the failure: they may have been added (memory: each one; stores:
    // whole batches sent before the failure, none here). Retrying the whole input is always safe.
    const retried = await filter.addMany([...before, ...after])
    check(retried.length === 100, 'the filter works after a failed addMany')
    check((await filter.hasMany([...before, ...after])).every(Boolean), 'after a retry every key is present')
  })

  withFilters('a closed filter refuses every call with BLOOM_CLOSED; close is idempotent', async (make) => {
    const filter = await make(parameters)
    await filter.close()
    await filter.close()
    check(filter.isClosed, 'isClosed after close')
    const calls: Array<[string, () => unknown]> = [
      ['add', () => filter.add('k')],
      ['has', () => filter.has('k')],
      ['addMany', () => filter.addMany(['k'])],
      ['hasMany', () => filter.hasMany(['k'])],
      ['estimateCount', () => filter.estimateCount()],
      ['errorRate', () => filter.errorRate()],
      ['countSetBits', () => filter.countSetBits()],
      ['clear', () => filter.clear()],
      ['export', () => filter.export()],
      ['exportChunks', () => filter.exportChunks().next()],
    ]
    for (const [what, call] of calls) {
      const error = await caught(call, what)
      check(error instanceof BloomError && error.code === 'BLOOM_CLOSED', `${what} on a closed filter: expected BLOOM_CLOSED, got ${String(error)}`)
      rejectsWhenAsync(filter, call, what)
    }
  })
}

/** An asynchronous filter refuses with a rejected Promise, never a synchronous throw (callers only await). */
function rejectsWhenAsync(filter: BloomFilter, call: () => unknown, what: string): void {
  if (filter.isSync) return
  let result: unknown
  try {
    result = call()
  } catch (error) {
    check(false, `${what}: an asynchronous filter threw synchronously (${String(error)}) instead of rejecting`)
  }
  check(result instanceof Promise, `${what}: an asynchronous filter must answer with a Promise`)
  ;(result as Promise<unknown>).catch(() => {})
}
