import fc from 'fast-check'
import { test } from 'vitest'

/**
 * `prop([arbitraries…], parameters)(name, body, timeout?)`: a vitest test that checks `body` for
 * every generated tuple with `fc.assert`, named `<name> (with seed=<n>)` (what `npm test` prints,
 * to replay a failure with BLOOMKIT_FC_SEED, see property-seed.ts).
 *
 * It does what @fast-check/vitest's `test.prop` does for these tests (none use its per-run hooks
 * or record form), without that package: importing it under vitest 4.1 costs ~4 s of CPU per test
 * file, spent wrapping every ordering of vitest's chained test modifiers (`test.skip.only…`).
 */
export function prop<Ts extends [unknown, ...unknown[]]>(arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> }, parameters: fc.Parameters<Ts> = {}) {
  return (name: string, body: (...values: Ts) => unknown, timeout?: number): void => {
    // The fixed seed of property-seed.ts unless the test names its own; a fresh one under
    // `npm run test:explore`, shown in the name either way.
    const seed = parameters.seed ?? fc.readConfigureGlobal().seed ?? (Date.now() ^ (Math.random() * 0x1_0000_0000))
    // A body that returns false fails, as in fc.property; one that throws fails with its error.
    const property = fc.asyncProperty(...(arbitraries as unknown as [fc.Arbitrary<unknown>]), async (...values: unknown[]) => (await body(...(values as Ts))) as boolean | void)
    test(`${name} (with seed=${seed})`, () => fc.assert(property as unknown as fc.IAsyncProperty<Ts>, { ...parameters, seed }), timeout)
  }
}
