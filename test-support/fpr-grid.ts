/**
 * The false-positive grid of issue 20: cells of (layout, capacity, error rate, growth), each filled
 * by many filters with fixed seeds and fixed, disjoint corpora (members `m:<filter>:<i>`, probes
 * `p:<filter>:<i>`), so a run gives the same counts for the same commit. Every backend's test runs
 * the cells on its own store through a small factory.
 *
 * Two bounds per cell, both multiplicative Chernoff bounds (test-support/chernoff.ts) at ε = 1e-6:
 * - `model`: around μ = probes × the sizing model's expected rate at the filter's actual parameters
 *   (`estimateErrorRate` at the keys added; for a layered filter, the union over its layers at their
 *   counts). It checks that filters meet what sizing promises. Each filter gets few probes, so
 *   the count is close to a sum of independent rare trials even where one filter's rate varies a lot
 *   from another's (small filters).
 * - `actual`: around μ = Σ probes × each filter's rate given its set bits (`errorRate()`: the
 *   chance that k independent positions all land on set bits). It checks the hash scheme: a scheme
 *   whose positions collapse onto few bits (scheme 1 on small shards) reads present far above it.
 * With μ ≥ about 15 a count 3× μ is outside both; the tightest cells (1e-6, 1e-9) cannot reach that
 * with a modest number of probes, and there the bound (a handful of positives) still fails the
 * excess the issue measured (scheme 1: hundreds to thousands).
 */
// Core's sources by path: test-support is outside the packages, where '@bloomkit/core' resolves.
import { estimateErrorRate, type LayerInfo } from '../packages/core/src/index.js'
import { chernoffInterval } from './chernoff.js'
import { gridSeed, type GridCell } from './fpr-cells.js'

export { GRID, STORE_GRID, type GridCell } from './fpr-cells.js'

/** What the grid needs of a filter on some store. */
export interface GridFilter {
  addMany(keys: string[]): unknown
  hasMany(keys: string[]): readonly boolean[] | Promise<readonly boolean[]>
  /** The sizing model's expected false-positive rate at the keys added (see {@link modelRate}). */
  modelRate(added: number): number | Promise<number>
  /** The rate given the filter's set bits now (`errorRate()`). */
  errorRate(): number | Promise<number>
  close(): unknown
}

/** Makes filter number `index` of `cell` with `seed`. */
export type GridFactory = (cell: GridCell, seed: number, index: number) => Promise<GridFilter>

/** What a cell measured. */
export interface CellResult {
  readonly cell: GridCell
  readonly probes: number
  readonly positives: number
  /** μ from the model, and its allowed [low, high] counts. */
  readonly model: { readonly mu: number; readonly low: number; readonly high: number }
  /** μ from each filter's set bits, and its allowed [low, high] counts. */
  readonly actual: { readonly mu: number; readonly low: number; readonly high: number }
}

/** Width of the bounds: how unlikely crossing one is by chance alone. */
export const GRID_EPSILON = 1e-6



/** Fills each filter of `cell` (from `factory`) to its keys, probes it, and returns the counts and bounds. */
export async function measureCell(cell: GridCell, factory: GridFactory): Promise<CellResult> {
  const added = Math.round(cell.capacity * (cell.fill ?? 1))
  let positives = 0
  let modelMu = 0
  let actualMu = 0
  for (let index = 0; index < cell.filters; index++) {
    const filter = await factory(cell, gridSeed(cell, index), index)
    try {
      // A layered filter grows layer by layer as keys arrive; batches of a layer's size keep that order.
      const step = cell.growth === undefined ? added : cell.capacity
      for (let from = 0; from < added; from += step) {
        await filter.addMany(Array.from({ length: Math.min(step, added - from) }, (_, i) => `m:${index}:${from + i}`))
      }
      const answers = await filter.hasMany(Array.from({ length: cell.probes }, (_, i) => `p:${index}:${i}`))
      for (const present of answers) if (present) positives++
      modelMu += cell.probes * (await filter.modelRate(added))
      actualMu += cell.probes * (await filter.errorRate())
    } finally {
      await filter.close()
    }
  }
  const bounds = (mu: number) => {
    const [low, high] = chernoffInterval(mu, GRID_EPSILON)
    return { mu, low, high }
  }
  return { cell, probes: cell.filters * cell.probes, positives, model: bounds(modelMu), actual: bounds(actualMu) }
}

/** One line of a cell's result, for the test log. */
export function describeResult(result: CellResult): string {
  const rate = (n: number) => (n / result.probes).toExponential(2)
  return (
    `${result.cell.name}: ${result.positives} of ${result.probes} probes (${rate(result.positives)}); ` +
    `model ${rate(result.model.mu)} allows ≤ ${Math.floor(result.model.high)}; set bits ${rate(result.actual.mu)} allow ≤ ${Math.floor(result.actual.high)}`
  )
}

/** The union over a layered filter's layers of each layer's model rate at the keys it holds. */
export function layeredModelRate(layers: readonly LayerInfo[]): number {
  let none = 1
  for (const layer of layers) none *= 1 - estimateErrorRate({ ...layer.parameters, items: layer.count })
  return 1 - none
}
