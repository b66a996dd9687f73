import { crc32 } from '../format/crc32.js'
import { BloomError } from '../errors.js'
import type { BloomKey } from '../hashing/key-hasher.js'
import type { LayeredFilter } from '../layered/layered-filter.js'
import { maxWindow, type LayerPolicy } from '../layered/layer-policy.js'
import type { LayeredOptions, RotatingOptions } from '../options.js'
import { caught, check } from './suite-support.js'

/** How {@link layeredFilterSuite} registers a test: a title, and a body given its filter makers (each closed after). */
export type WithFilters = (
  title: string,
  body: (
    make: (options: LayeredOptions) => Promise<LayeredFilter>,
    load: (snapshot: Uint8Array, clock?: () => number) => Promise<LayeredFilter>,
    share: (filter: LayeredFilter, clock: () => number) => Promise<LayeredFilter>,
  ) => Promise<void>,
) => void

const minute = 60_000
const keysOf = (prefix: string, count: number): BloomKey[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
const codeOf = (error: unknown): string | undefined => (error instanceof BloomError ? error.code : undefined)
const windowsOf = async (filter: LayeredFilter) => (await filter.layers()).map((layer) => layer.window)

/** A copy of a rotating filter's snapshot whose first layer's window is `window` (its record's CRC-32 made anew). */
function withFirstWindow(snapshot: Uint8Array, window: number): Uint8Array {
  const copy = snapshot.slice()
  const record = new DataView(copy.buffer, 68, 20)
  record.setUint32(0, window % 2 ** 32, true)
  record.setUint32(4, Math.floor(window / 2 ** 32), true)
  record.setUint32(16, crc32(copy.subarray(68, 84)), true)
  return copy
}

/**
 * The rotating filter's windows, as tests of {@link layeredFilterSuite} (docs/SPEC.md 8 and 9.8):
 * a key re-added is kept `keep` windows from its latest add, a clock `keep` windows behind is
 * refused, windows stay in order and in range. `shared`: the backend offers a second instance over
 * the same stored filter.
 */
export function layeredWindowTests(withFilters: WithFilters, { shared }: { readonly shared: boolean }): void {
  withFilters('rotating: a key re-added in a later window is written into it and kept keep windows from then; it is new to that window', async (make) => {
    let now = 1_000 * minute
    const filter = await make({ capacity: 100, errorRate: 0.001, seed: 5, window: { seconds: 60, keep: 3 }, clock: () => now } as RotatingOptions)
    const batch = keysOf('again:', 40)
    check((await filter.add('k')) === true, 'a first add is new')
    check((await filter.addMany(batch)).every(Boolean), 'a first addMany of 40 keys: each new')
    now += 2 * minute
    check(await filter.has('k'), 'found two windows later (keep 3)')
    check((await filter.add('k')) === true, 'added again two windows later: new to window 1002')
    check((await filter.add('k')) === false, 'added a third time in the same window: not new')
    check((await filter.addMany(batch)).every(Boolean), 'addMany again two windows later: each key new to window 1002')
    const counts = (await filter.layers()).map((layer) => `${layer.window}:${layer.count}`)
    check(JSON.stringify(counts) === '["1000:41","1002:41"]', `each window counts the keys new to it; got ${counts.join(', ')}`)
    now += 2 * minute
    check(JSON.stringify(await windowsOf(filter)) === '[1002]', `window 1000 has passed; live windows ${(await windowsOf(filter)).join(', ')}`)
    const found = await filter.hasMany(['k', ...batch])
    check(found.every(Boolean), `keys re-added in window 1002 are found in window 1004; ${found.filter((f) => !f).length} of 41 are not`)
    now += minute
    check(!(await filter.has('k')), 'and forgotten once window 1002 has passed')
  })

  withFilters('rotating: first-time keys that an older window’s layer holds by chance (false positives) are written into the current window too', async (make) => {
    let now = 2_000 * minute
    // Each window's layer is sized for 1000 keys at 25 %: an older full layer seems to hold about a quarter of any new keys.
    const filter = await make({ capacity: 1000, errorRate: 0.5, seed: 17, layout: 'classic', window: { seconds: 60, keep: 2 }, clock: () => now } as RotatingOptions)
    await filter.addMany(keysOf('old:', 1000))
    now += minute
    const fresh = keysOf('fresh:', 1000)
    const seeming = (await filter.hasMany(fresh)).filter(Boolean).length
    check(seeming > 100, `the older layer seems to hold many of the new keys (${seeming} of 1000), so the test tests something`)
    await filter.addMany(fresh)
    now += minute
    const found = await filter.hasMany(fresh)
    check(found.every(Boolean), `keys added in window 2001 are found in window 2002; ${found.filter((f) => !f).length} of 1000 went with window 2000`)
  })

  withFilters('rotating: a clock keep windows behind the filter’s newest window is refused (BLOOM_CLOCK_SKEW), fewer adds into the newest window; reads always answer', async (make, load) => {
    let now = 1_000 * minute
    const filter = await make({ capacity: 50, errorRate: 0.001, seed: 5, window: { seconds: 60, keep: 2 }, clock: () => now } as RotatingOptions)
    now += 5 * minute
    await filter.add('first')
    now -= minute
    check((await filter.add('behind')) === true, 'a clock one window behind (keep 2) adds')
    check(JSON.stringify(await windowsOf(filter)) === '[1005]', `into the newest window, 1005; got ${(await windowsOf(filter)).join(', ')}`)
    now -= minute
    const refused = await caught(() => filter.add('lost'), 'add from 2 windows behind')
    check(codeOf(refused) === 'BLOOM_CLOCK_SKEW', `a clock stepped back keep windows is BLOOM_CLOCK_SKEW; got ${String(refused)}`)
    check(codeOf(await caught(() => filter.addMany(['lost-1']), 'addMany from 2 windows behind')) === 'BLOOM_CLOCK_SKEW', 'addMany is refused the same way')
    check((await filter.has('first')) && !(await filter.has('lost')), 'reads answer; the refused key was not written')
    now += 2 * minute
    check(await filter.has('behind'), 'the key added a window behind is found once the clock is on time')
    // A snapshot whose newest window is keep windows past the importer's clock.
    const copy = await load(await filter.export(), () => 1_003 * minute)
    check(codeOf(await caught(() => copy.add('late'), 'add to a copy from 2 windows behind')) === 'BLOOM_CLOCK_SKEW', 'an import read by a clock keep windows behind refuses adds')
    check(await copy.has('first'), 'and reads it')
  })

  withFilters('rotating: windows are bounded so their arithmetic stays exact: a clock past 2^53 − 1 ms and a snapshot window past it are refused, the filter intact', async (make, load, share) => {
    let now = 1_000 * 1000
    const options = { capacity: 50, errorRate: 0.001, seed: 8, window: { seconds: 1, keep: 2 }, clock: () => now } as RotatingOptions
    const filter = await make(options)
    await filter.add('kept')
    const last = maxWindow(filter.policy as LayerPolicy)
    check(last === Math.floor(Number.MAX_SAFE_INTEGER / 1000), `1-second windows end at ${Math.floor(Number.MAX_SAFE_INTEGER / 1000)}; got ${last}`)
    for (const time of [Number.MAX_SAFE_INTEGER + 1, 1e19]) {
      now = time
      check(codeOf(await caught(() => filter.add('far'), `add at ${time} ms`)) === 'BLOOM_INVALID_PARAMETER', `a clock of ${time} ms is BLOOM_INVALID_PARAMETER`)
    }
    now = 1_000 * 1000
    check((await filter.has('kept')) && (await filter.add('later')), 'the filter answers and adds as before')
    if (shared) {
      const other = await share(filter, () => now)
      check(await other.has('later'), 'and another instance opens it')
    }
    const snapshot = await filter.export()
    const past = await caught(() => load(withFirstWindow(snapshot, last + 1), () => now), 'import of a window past the bound')
    check(codeOf(past) === 'BLOOM_CORRUPT_SNAPSHOT', `a snapshot window of ${last + 1} is BLOOM_CORRUPT_SNAPSHOT; got ${String(past)}`)
    check(codeOf(await caught(() => load(withFirstWindow(snapshot, 2 ** 60), () => now), 'import of window 2^60')) === 'BLOOM_CORRUPT_SNAPSHOT', 'and so is 2^60')
    // The last window is usable: a clock at 2^53 − 1 ms adds into it.
    now = Number.MAX_SAFE_INTEGER
    const edge = await load(withFirstWindow(snapshot, last), () => now)
    check((await edge.has('kept')) && (await edge.add('at-the-end')) && (await edge.has('at-the-end')), 'a filter at the last window answers and adds')
    check(JSON.stringify(await windowsOf(edge)) === JSON.stringify([last]), `its one layer is of window ${last}; got ${(await windowsOf(edge)).join(', ')}`)
    check(JSON.stringify(await windowsOf(await load(await edge.export(), () => now))) === JSON.stringify([last]), 'and exports what imports again')
  })

  if (shared) {
    withFilters('rotating: a writer one window behind adds into the newest window, so the list stays in window order and export gives what import takes', async (make, load, share) => {
      let onTime = 4_000 * minute
      const filter = await make({ capacity: 50, errorRate: 0.001, seed: 23, window: { seconds: 60, keep: 3 }, clock: () => onTime } as RotatingOptions)
      const late = await share(filter, () => onTime - minute)
      await late.add('late-first')
      onTime += minute
      await filter.add('on-time')
      await late.add('late-second')
      const windows = await windowsOf(filter)
      check(JSON.stringify(windows) === '[3999,4001]', `windows in order, the late add in the newest; got ${windows.join(', ')}`)
      const copy = await load(await filter.export(), () => onTime)
      check(JSON.stringify(await windowsOf(copy)) === '[3999,4001]', 'the export imports, with the same windows')
      check((await copy.hasMany(['late-first', 'on-time', 'late-second'])).every(Boolean), 'and the copy finds every key')
    })
  }
}
