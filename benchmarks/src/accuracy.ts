import { estimateErrorRate, type FilterParameters } from '@bloomkit/core'
import { earlierSizeFilter, layerPolicies } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { GRID, gridSeed, type GridCell } from '../../test-support/dist/fpr-cells.js'
import type { SuiteOptions } from './measure.js'
import type { Report } from './report.js'

const { layerCapacity, layerErrorRate, layerPolicyOf } = layerPolicies

/** A filter under measurement: add keys in order, ask for probes. */
interface Probed {
  add(keys: string[]): void
  has(keys: string[]): readonly boolean[]
}

/** The issue's rows (issue 20), which also run as an earlier release built them. */
const BEFORE_AND_AFTER = new Set([
  'classic cap 1 @ 1e-9',
  'classic cap 1 @ 1e-3',
  'classic cap 3 @ 1e-2',
  'classic cap 10 @ 1e-6',
  'classic cap 100 @ 1e-6',
  'layered growth 1, cap 1, grown 20× @ 1e-3',
  'layered growth 2, cap 10, grown 20× @ 1e-3',
])

/**
 * Requested against measured false-positive rate, over the grid of the tests
 * (test-support/fpr-cells.ts): many filters per cell, one fixed seed each, filled to capacity (a
 * layered cell: to 20× its first layer) with `m:<filter>:<i>`, then probed with keys never added.
 * For the issue's rows the same run also measures filters as the release before built them: classic
 * hash scheme 1 at that release's sizes (`earlierSizeFilter`; a layered filter as one scheme-1
 * filter per layer at that release's layer sizes), and scheme 3 at those sizes, which separates
 * what the hashing fixed from what the sizing did. No timings: every row carries notes only.
 */
export async function runAccuracyBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  // Quick: a tenth of the probes per filter (rates then rest on fewer positives).
  const scale = quick ? 0.1 : 1
  for (const [done, cell] of GRID.entries()) {
    report.progress(done, GRID.length, cell.name)
    const probes = Math.max(10, Math.round(cell.probes * scale))
    const subjects: Array<[string, (seed: number) => Promise<Probed>]> = [['bloomkit (scheme 3, this release’s sizes)', (seed) => current(cell, seed)]]
    if (BEFORE_AND_AFTER.has(cell.name)) {
      subjects.push(['before: scheme 1, earlier sizes', (seed) => earlier(cell, seed, 1)])
      if (cell.growth === undefined) subjects.push(['scheme 3, earlier sizes', (seed) => earlier(cell, seed, 3)])
    }
    for (const [subject, make] of subjects) {
      const { positives, total, model } = await measure(cell, probes, make)
      const rate = positives / total
      report.add({
        suite: 'accuracy',
        task: `FPR ${cell.name}`,
        subject,
        batch: probes,
        opsPerSecond: 0,
        notes:
          `asked ${cell.errorRate.toExponential(0)}, measured ${rate === 0 ? '0' : rate.toExponential(1)} (${positives} of ${total.toLocaleString('en-US')} probes, ` +
          `${cell.filters} filters), ${rate === 0 ? 'no false positive' : `${(rate / cell.errorRate).toPrecision(2)}× the rate asked`}` +
          (model === undefined ? '' : `; model ${model.toExponential(1)}`),
      })
    }
  }
}

async function measure(cell: GridCell, probes: number, make: (seed: number) => Promise<Probed>): Promise<{ positives: number; total: number; model?: number }> {
  const added = Math.round(cell.capacity * (cell.fill ?? 1))
  const step = cell.growth === undefined ? added : cell.capacity
  let positives = 0
  let model = 0
  for (let index = 0; index < cell.filters; index++) {
    const seed = gridSeed(cell, index)
    const filter = await make(seed)
    for (let from = 0; from < added; from += step) filter.add(Array.from({ length: Math.min(step, added - from) }, (_, i) => `m:${index}:${from + i}`))
    for (const present of filter.has(Array.from({ length: probes }, (_, i) => `p:${index}:${i}`))) if (present) positives++
    if (cell.growth === undefined) model += estimateErrorRate({ ...(filter as FixedProbed).parameters, items: added })
  }
  return { positives, total: cell.filters * probes, model: cell.growth === undefined ? model / cell.filters : undefined }
}

interface FixedProbed extends Probed {
  readonly parameters: FilterParameters
}

function fixed(filter: MemoryBloomFilter): FixedProbed {
  return { parameters: filter.parameters, add: (keys) => filter.addMany(keys), has: (keys) => filter.hasMany(keys) }
}

/** As a user of this release makes it. */
async function current(cell: GridCell, seed: number): Promise<Probed> {
  if (cell.growth === undefined) return fixed(await MemoryBloomFilter.create({ capacity: cell.capacity, errorRate: cell.errorRate, layout: cell.layout, seed }))
  const filter = await LayeredMemoryFilter.create({ capacity: cell.capacity, errorRate: cell.errorRate, growth: cell.growth, seed })
  return { add: (keys) => filter.addMany(keys), has: (keys) => filter.hasMany(keys) }
}

/**
 * At the sizes the release before gave the same options, with classic layers on `scheme`. A layered
 * cell is its layers side by side: layer i holds the next `capacity · growth^i` keys at the policy's
 * rate for it (sized by {@link earlierLayer}), and a key reads present if any layer has it.
 */
async function earlier(cell: GridCell, seed: number, scheme: 1 | 3): Promise<Probed> {
  const withScheme = (parameters: FilterParameters): FilterParameters => (parameters.layout === 'classic' ? { ...parameters, scheme } : parameters)
  if (cell.growth === undefined) {
    return fixed(await MemoryBloomFilter.fromParameters(withScheme(earlierSizeFilter({ capacity: cell.capacity, errorRate: cell.errorRate, layout: cell.layout, seed }))))
  }
  const policy = layerPolicyOf({ capacity: cell.capacity, errorRate: cell.errorRate, growth: cell.growth, seed })
  const layers: Array<{ filter: MemoryBloomFilter; capacity: number; held: number }> = []
  const addLayer = () => {
    const index = layers.length
    const capacity = Math.ceil(layerCapacity(policy, index))
    const parameters = withScheme(earlierLayer(capacity, layerErrorRate(policy, index), seed))
    layers.push({ filter: MemoryBloomFilter.fromParametersSync(parameters), capacity, held: 0 })
  }
  addLayer()
  const has = (key: string) => layers.some((layer) => layer.filter.has(key))
  return {
    add: (keys) => {
      for (const key of keys) {
        if (has(key)) continue // present already: not new, as a layered filter counts it
        if (layers[layers.length - 1].held >= layers[layers.length - 1].capacity) addLayer()
        const newest = layers[layers.length - 1]
        newest.filter.add(key)
        newest.held++
      }
    },
    has: (keys) => keys.map(has),
  }
}

/**
 * A layer as the release before sized it: `earlierSizeFilter`, then grown in 0.1 % steps (a byte at
 * least) while the textbook rate (1 − (1 − 1/m)^(kn))^k is above the layer's rate. That is its rule
 * for one-shard classic layers, which every layer of this grid's layered cells is.
 */
function earlierLayer(capacity: number, errorRate: number, seed: number): FilterParameters {
  let parameters = earlierSizeFilter({ capacity, errorRate, seed })
  if (parameters.layout !== 'classic' || parameters.shards !== 1) return parameters
  const textbook = (bits: number) => Math.pow(-Math.expm1(parameters.hashes * capacity * Math.log1p(-1 / bits)), parameters.hashes)
  while (textbook(parameters.bits) > errorRate) parameters = { ...parameters, bits: parameters.bits + Math.max(8, Math.ceil((parameters.bits * 0.001) / 8) * 8) }
  return parameters
}
