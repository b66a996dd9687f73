// The hashing suite's batch rows (issue 36 item 3): KeyHasher.hashMany over batches of 1000 keys
// against the same hasher's hash() key by key, both as a filter gets it (createKeyHasher:
// WebAssembly where the runtime allows it), in fresh isolates like the suite's other string rows.
import type { KeySet } from './hashing-keys.js'
import type { HashingJob, HashingMeasurement, KeyShape } from './hashing-worker.js'
import { median } from './measure.js'
import type { Report } from './report.js'

/** Issue 36's targets: batch hashing of 1000 keys at least this much faster than key by key. */
const TARGETS: Record<string, number> = { user: 2, uuid: 3, url: 3 }

export interface BatchRowOptions {
  /** The key sets of real key shapes (`user:<n>`, UUIDs, URLs). */
  readonly sets: readonly KeySet[]
  readonly isolates: number
  readonly workerTimes: { readonly warmupMs: number; readonly measureMs: number }
  readonly shapes: Record<KeyShape, string>
  readonly measure: (job: HashingJob) => Promise<HashingMeasurement>
}

/**
 * For each set and shape: `isolates` fresh isolates per side (alternating which goes first), the
 * median ns a key of each, their ratio; then one target row. In the built shape the loop's keys are
 * flattened in place by their first hash (the worker's first pass), while hashMany's join copies them
 * without flattening, so the loop is timed at its best there (fresh built keys: the memory suite's lead rows).
 */
export async function runBatchRows(report: Report, { sets, isolates, workerTimes, shapes, measure }: BatchRowOptions): Promise<void> {
  const verdicts: string[] = []
  for (const [step, set] of sets.entries()) {
    report.progress(step, sets.length, `${set.name}: batches of 1000, ${isolates} isolates per side and shape`)
    for (const shape of Object.keys(shapes) as KeyShape[]) {
      const samples = { loop: [] as number[], many: [] as number[] }
      const checksums = new Set<number>()
      for (let p = 0; p < isolates; p++) {
        for (const side of p % 2 === 0 ? (['many', 'loop'] as const) : (['loop', 'many'] as const)) {
          const measured = await measure({ side, keys: set.keys, shape, ...workerTimes })
          samples[side].push(measured.nsPerKey)
          checksums.add(measured.checksum)
        }
      }
      if (checksums.size !== 1) throw new Error(`hashing ${set.name} (${shape}): hashMany and hash() disagree (checksums ${[...checksums].join(', ')})`)
      const speedup = median(samples.loop) / median(samples.many)
      const target = TARGETS[set.id]
      const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`
      report.add({
        suite: 'hashing',
        task: `${set.name}, both lanes, batches of 1000`,
        subject: `bloomkit KeyHasher.hashMany (string, ${shapes[shape]})`,
        batch: 1000,
        opsPerSecond: 1e9 / median(samples.many),
        notes: `${speedup.toFixed(2)}× its hash() key by key (${median(samples.loop).toFixed(0)} ns; target ≥ ${target}×); medians of ${isolates} fresh isolates a side (hashMany ${range(samples.many)} ns, hash() ${range(samples.loop)} ns)`,
      })
      verdicts.push(`${set.name} ${shape} ${speedup.toFixed(2)}× (≥ ${target}× ${speedup >= target ? 'met' : 'MISSED'})`)
    }
  }
  report.add({
    suite: 'hashing',
    task: 'target: batches of 1000 vs key by key',
    subject: 'KeyHasher.hashMany / hash()',
    batch: 1000,
    opsPerSecond: 0,
    notes: `${verdicts.join('; ')}. The hasher a filter gets (createKeyHasher) on both sides`,
  })
}
