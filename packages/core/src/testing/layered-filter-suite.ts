import { BloomError } from '../errors.js'
import type { BloomKey } from '../hashing/key-hasher.js'
import type { LayeredFilter } from '../layered/layered-filter.js'
import type { LayeredOptions, RotatingOptions } from '../options.js'
import { layeredWindowTests, type WithFilters } from './layered-window-tests.js'
import { caught, check, type TestFunction } from './suite-support.js'

/** Inputs of {@link layeredFilterSuite}. */
export interface LayeredFilterSuiteOptions {
  /** Registers one test; pass your runner's `test`. */
  readonly test: TestFunction
  /**
   * A new, empty layered filter with these options (a rotating one with the given `clock`),
   * isolated from every other filter it has made. The suite closes it.
   */
  readonly factory: (options: LayeredOptions) => LayeredFilter | Promise<LayeredFilter>
  /** The backend's import of a layered snapshot into a new, isolated filter (the suite closes it). */
  readonly importer: (snapshot: Uint8Array, options: { clock?: () => number }) => LayeredFilter | Promise<LayeredFilter>
  /**
   * Optional, for stores shared by processes (Redis): another instance over the same stored filter
   * as `filter`, with its own clock, as a second process would open it. Without it, the tests of
   * writers sharing a list are skipped (a store with one owner never sees another's layers).
   */
  readonly sharer?: (filter: LayeredFilter, options: { clock?: () => number }) => LayeredFilter | Promise<LayeredFilter>
  /** Per-test timeout in ms, for filters behind a network. */
  readonly timeout?: number
  /** Prefix of the test names. Default: 'LayeredFilter'. */
  readonly name?: string
}

const keysOf = (prefix: string, count: number): BloomKey[] =>
  Array.from({ length: count }, (_, i) => (i % 5 === 4 ? new TextEncoder().encode(`${prefix}${i}`) : `${prefix}${i}`))

const codeOf = (error: unknown): string | undefined => (error instanceof BloomError ? error.code : undefined)

/**
 * The layered filter's behaviour over a backend's storage port, as tests: growth and its sizes,
 * windows (never backwards), answers, snapshots, refusals and the closed state. Core's
 * `LayeredFilter` holds the mechanism; this checks that a backend's port lets it work. Every
 * backend runs it with a few lines; it needs no particular test runner.
 *
 * @example
 * import { test } from 'vitest'
 * layeredFilterSuite({ test, factory: (options) => LayeredMemoryFilter.create(options), importer: (s, o) => LayeredMemoryFilter.import(s, o) })
 */
export function layeredFilterSuite(options: LayeredFilterSuiteOptions): void {
  const { test, factory, importer, sharer, timeout, name = 'LayeredFilter' } = options

  const withFilters: WithFilters = (title, body) => {
    test(
      `${name}: ${title}`,
      async () => {
        const filters: LayeredFilter[] = []
        const keep = (filter: LayeredFilter) => {
          filters.push(filter)
          return filter
        }
        try {
          await body(
            async (o) => keep(await factory(o)),
            async (s, clock) => keep(await importer(s, { clock })),
            async (filter, clock) => keep(await sharer!(filter, { clock })),
          )
        } finally {
          for (const filter of filters) await filter.close()
        }
      },
      timeout,
    )
  }

  withFilters('a scalable filter grows in layers growth× larger, each full before the next, and keeps every key', async (make) => {
    const filter = await make({ capacity: 40, errorRate: 0.01, growth: 2, seed: 11 })
    check(filter.kind === 'layered', `kind is 'layered', got ${String(filter.kind)}`)
    const keys = keysOf('grow:', 500)
    const added = await filter.addMany(keys)
    check(added.filter(Boolean).length >= 490, `at most a few false positives among 500 new keys; ${added.filter(Boolean).length} were new`)
    const found = await filter.hasMany(keys)
    check(found.every(Boolean), `no false negative: ${found.indexOf(false)} is missing`)
    const layers = await filter.layers()
    const capacities = layers.map((layer) => layer.capacity)
    check(JSON.stringify(capacities) === JSON.stringify([40, 80, 160, 320].slice(0, layers.length)) && layers.length === 4, `capacities 40, 80, 160, 320; got ${capacities.join(', ')}`)
    for (const layer of layers.slice(0, -1)) check(layer.count === layer.capacity, `a layer before the newest is full: count ${layer.count}, capacity ${layer.capacity}`)
    const rates = layers.map((layer) => layer.errorRate)
    check(rates.every((rate, i) => Math.abs(rate - 0.01 * 0.5 * 0.5 ** i) < 1e-15), `layer i is sized for errorRate·(1 − r)·r^i; got ${rates.join(', ')}`)
    check(layers.every((layer) => layer.parameters.seed === 11 && layer.window === 0), 'every layer has the filter’s seed and window 0')
    check((await filter.estimateCount()) === layers.reduce((sum, layer) => sum + layer.count, 0), 'estimateCount is the sum of the layers’ counts')
    const rate = await filter.errorRate()
    check(rate > 0 && rate < 0.01, `the compound error rate stays below errorRate; got ${rate}`)
  })

  withFilters('without a seed, every layered filter, scalable and rotating, gets its own secret random seed', async (make) => {
    const seeds: number[] = []
    for (const options of [
      { capacity: 20, errorRate: 0.01, growth: 2 },
      { capacity: 20, errorRate: 0.01, growth: 2 },
      { capacity: 20, errorRate: 0.01, window: { seconds: 60, keep: 2 }, clock: () => 1_000 * 60_000 },
    ] as LayeredOptions[]) {
      const filter = await make(options)
      await filter.addMany(keysOf('seeded:', 50))
      check(filter.policy.seed !== 0, 'a filter made without a seed does not get the public seed 0')
      const layers = await filter.layers()
      check(layers.length > 0 && layers.every((layer) => layer.parameters.seed === filter.policy.seed), 'every layer has the filter’s seed')
      seeds.push(filter.policy.seed)
    }
    check(new Set(seeds).size === seeds.length, `three filters, three seeds; got ${seeds.join(', ')}`)
  })

  withFilters('add answers false for a key already there and writes nothing; single and batch calls agree', async (make) => {
    const filter = await make({ capacity: 100, errorRate: 0.001, growth: 2, seed: 3 })
    check((await filter.add('k')) === true, 'a new key answers true')
    check((await filter.add('k')) === false, 'the same key again answers false')
    check((await filter.estimateCount()) === 1, 'a repeated key is not counted')
    const singles = await Promise.all(['k', 'absent-1', 'absent-2'].map((key) => filter.has(key)))
    const many = await filter.hasMany(['k', 'absent-1', 'absent-2'])
    check(JSON.stringify(singles) === JSON.stringify(many) && singles[0], `has and hasMany agree: ${JSON.stringify(singles)} vs ${JSON.stringify(many)}`)
    check(codeOf(await caught(() => filter.has(42 as unknown as string), 'has(42)')) === 'BLOOM_INVALID_KEY', 'a number key is BLOOM_INVALID_KEY')
    check(codeOf(await caught(() => filter.addMany([null as unknown as string]), 'addMany([null])')) === 'BLOOM_INVALID_KEY', 'a null key is BLOOM_INVALID_KEY')
  })

  withFilters('a rotating filter finds a key for keep − 1 windows and forgets it after keep', async (make) => {
    let now = 1_000 * 60_000
    const filter = await make({ capacity: 50, errorRate: 0.001, seed: 5, window: { seconds: 60, keep: 3 }, clock: () => now } as RotatingOptions)
    await filter.add('old')
    now += 2 * 60_000
    check(await filter.has('old'), 'found two windows later (keep 3)')
    await filter.add('newer')
    now += 60_000
    check(!(await filter.has('old')), 'forgotten three windows later')
    check(await filter.has('newer'), 'a later key is still found')
    const windows = (await filter.layers()).map((layer) => layer.window)
    check(windows.every((window) => window > 1000), `the layer of the window that passed is gone; windows ${windows.join(', ')}`)
  })

  if (sharer !== undefined) {
    withFilters('a writer whose clock lags keep windows behind a shared filter’s newest layer gets BLOOM_CLOCK_SKEW and writes nothing; one keep − 1 behind adds visibly', async (make, _, share) => {
      const minute = 60_000
      let onTime = 3_000 * minute
      let behind = onTime
      const filter = await make({ capacity: 50, errorRate: 0.0001, seed: 13, window: { seconds: 60, keep: 2 }, clock: () => onTime } as RotatingOptions)
      await filter.add('w3000')
      const late = await share(filter, () => behind)
      // The on-time writer moves 2 windows on (3002: readers keep 3001 and 3002); the late one's clock stays at 3000.
      onTime += 2 * minute
      await filter.add('w3002')
      const listed = (await filter.layers()).map((layer) => layer.window)
      const refused = await caught(() => late.add('lost'), 'add from 2 windows behind')
      check(codeOf(refused) === 'BLOOM_CLOCK_SKEW', `an add from window 3000 is BLOOM_CLOCK_SKEW; got ${String(refused)}`)
      const message = (refused as Error).message
      check(message.includes('3000') && message.includes('3001'), `the message names the writer's window and the oldest kept; got ${message}`)
      check(codeOf(await caught(() => late.addMany(['lost-1', 'lost-2']), 'addMany from 2 windows behind')) === 'BLOOM_CLOCK_SKEW', 'addMany is refused the same way')
      check(JSON.stringify((await filter.layers()).map((layer) => layer.window)) === JSON.stringify(listed), 'nothing was listed by the refused adds')
      check(!(await filter.has('lost')), 'the refused key was not written')
      // One window behind (3001 of keep 2): still checked by readers on time, so the add is allowed and seen.
      behind += minute
      check((await late.add('late-by-one')) === true, 'an add from one window behind is new')
      check(await filter.has('late-by-one'), 'and an on-time reader finds it')
      check((await late.has('w3002')) && (await filter.has('w3002')), 'reads are never refused: the late reader finds the newest window’s key')
    })
  }

  withFilters('a rotating filter’s busy window grows layers when it has growth', async (make) => {
    const now = 2_000 * 60_000
    const filter = await make({ capacity: 20, errorRate: 0.01, growth: 2, seed: 9, window: { seconds: 60, keep: 2 }, clock: () => now } as RotatingOptions)
    await filter.addMany(keysOf('busy:', 100))
    const layers = await filter.layers()
    check(layers.length === 3 && layers.every((layer) => layer.window === 2000), `three layers in window 2000; got ${layers.map((l) => `${l.window}/${l.capacity}`).join(', ')}`)
    check(JSON.stringify(layers.map((layer) => layer.capacity)) === '[20,40,80]', 'capacities 20, 40, 80')
  })

  withFilters('export and the backend’s import give the same layers and answers', async (make, load) => {
    const filter = await make({ capacity: 30, errorRate: 0.01, growth: 3, seed: 21, layout: 'classic' })
    await filter.addMany(keysOf('snap:', 200))
    const snapshot = await filter.export()
    const copy = await load(snapshot)
    check(JSON.stringify(await copy.layers()) === JSON.stringify(await filter.layers()), 'the copy has the same layers')
    const probes = keysOf('probe:', 300)
    check(JSON.stringify(await copy.hasMany(probes)) === JSON.stringify(await filter.hasMany(probes)), 'the copy answers as the original')
    const again = await copy.export()
    check(again.length === snapshot.length && again.every((byte, i) => byte === snapshot[i]), 'the copy exports the same bytes')
  })

  withFilters('clear drops every key; merge is refused; toJSON throws; a closed filter throws BLOOM_CLOSED', async (make) => {
    const filter = await make({ capacity: 10, errorRate: 0.01, growth: 2, seed: 4 })
    await filter.addMany(keysOf('clear:', 40))
    await filter.clear()
    check(!(await filter.has('clear:0')), 'a cleared filter holds no key')
    const layers = await filter.layers()
    check(layers.length === 1 && layers[0].count === 0 && layers[0].capacity === 10, 'a cleared scalable filter has one empty first layer')
    check(codeOf(await caught(() => filter.merge(filter), 'merge')) === 'BLOOM_INCOMPATIBLE', 'merge is BLOOM_INCOMPATIBLE')
    check((await caught(() => JSON.stringify(filter), 'JSON.stringify')) instanceof TypeError, 'JSON.stringify throws a TypeError')
    await filter.close()
    await filter.close()
    check(filter.isClosed, 'isClosed after close')
    for (const [what, call] of [
      ['has', () => filter.has('a')],
      ['add', () => filter.add('a')],
      ['layers', () => filter.layers()],
      ['export', () => filter.export()],
    ] as const) {
      check(codeOf(await caught(call, what)) === 'BLOOM_CLOSED', `${what} after close is BLOOM_CLOSED`)
    }
  })

  layeredWindowTests(withFilters, { shared: sharer !== undefined })
}
