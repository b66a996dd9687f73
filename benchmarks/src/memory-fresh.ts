// The memory suite's lead rows (issue 36 item 4): keys as applications pass them, allocated afresh
// in the order they are checked, in the two shapes a service holds: flat, as decoded from a request
// (`Buffer.from(s).toString()`), and built by a template literal (`user:${id}`, a ConsString from 13
// chars on), beside the pre-built arrays the rest of the suite reuses round after round.
import type { MemoryBloomFilter } from '@bloomkit/memory-backend'
import type { BloomFilter as Bloomfilter } from 'bloomfilter'
import { median, xorshift32 } from './measure.js'
import type { Report } from './report.js'

/** Keys per timed call: each call gets keys made for it just before, untimed. */
const FRESH_KEYS = 50_000
/** Keys per hasMany call: what services send. */
const BATCH = 1000

/** How a key string reaches the filter: decoded from bytes (flat), or built in code. */
const SHAPES = {
  flat: { title: 'flat, as from I/O', make: (id: number) => Buffer.from(`user:${id}`).toString() },
  built: { title: 'built by a template literal', make: (id: number) => `user:${id}` },
} as const
type Shape = keyof typeof SHAPES

/** What is timed on each call's fresh keys: bloomkit's hasMany(1000), its loop of has(), bloomfilter's loop of test(). */
const CALLS = ['many', 'loop', 'peer'] as const
type Call = (typeof CALLS)[number]

export interface FreshKeyOptions {
  readonly label: string
  readonly ours: MemoryBloomFilter
  readonly peer: Bloomfilter
  /** Present keys are `user:<id>` with id in [0, present); absent ones with id in [absentFrom, absentFrom + present). */
  readonly present: number
  readonly absentFrom: number
  readonly rounds: number
}

/**
 * Paired rounds: in each, for each shape and key kind, every call of {@link CALLS} checks its own
 * fresh keys (the same ids, in random order, new strings made right before it); which call goes
 * first rotates. Rows: each call's median keys/s, and hasMany's ratios to both loops, taken per round.
 */
export async function runFreshKeyRows(report: Report, { label, ours, peer, present, absentFrom, rounds }: FreshKeyOptions): Promise<void> {
  const idStreams = { present: xorshift32(36), absent: xorshift32(37) }
  const nextIds = (kind: 'present' | 'absent') => {
    const next = idStreams[kind]
    const from = kind === 'present' ? 0 : absentFrom
    return Float64Array.from({ length: FRESH_KEYS }, () => from + Math.floor((next() / 4294967296) * present))
  }
  // Keys arrive in batches of BATCH (a request's worth); the loops walk the same batches key by key.
  const run: Record<Call, (batches: string[][]) => number> = {
    many: (batches) => {
      let x = 0
      for (const batch of batches) {
        const answers = ours.hasMany(batch)
        for (let i = 0; i < answers.length; i++) x += answers[i] ? 1 : 0
      }
      return x
    },
    loop: (batches) => {
      let x = 0
      for (const batch of batches) for (let i = 0; i < batch.length; i++) x += ours.has(batch[i]) ? 1 : 0
      return x
    },
    peer: (batches) => {
      let x = 0
      for (const batch of batches) for (let i = 0; i < batch.length; i++) x += peer.test(batch[i]) ? 1 : 0
      return x
    },
  }
  type Sample = Record<Call, number>
  const samples = new Map<string, Sample[]>()
  let sink = 0
  for (let round = -1; round < rounds; round++) {
    report.progress(round + 1, rounds + 1, `${label}: fresh keys, round ${round + 1}`)
    const turn = (round + 3) % CALLS.length
    const order = [...CALLS.slice(turn), ...CALLS.slice(0, turn)]
    for (const shape of Object.keys(SHAPES) as Shape[]) {
      const make = SHAPES[shape].make
      for (const kind of ['present', 'absent'] as const) {
        const ids = nextIds(kind)
        const sample = {} as Sample
        for (const call of order) {
          // Made just before the call, in check order, as a request handler makes them; not timed.
          const batches: string[][] = []
          for (let from = 0; from < ids.length; from += BATCH) {
            const batch: string[] = []
            for (let i = from; i < from + BATCH; i++) batch.push(make(ids[i]))
            batches.push(batch)
          }
          const start = performance.now()
          sink ^= run[call](batches)
          sample[call] = ids.length / ((performance.now() - start) / 1000)
        }
        // Round -1 warms every call up on every shape and kind, untimed.
        if (round >= 0) {
          const key = `${shape} ${kind}`
          if (!samples.has(key)) samples.set(key, [])
          samples.get(key)!.push(sample)
        }
      }
    }
  }
  if (sink === 0.5) console.log('unreachable: keeps the calls observable')
  const paired = (rows: Sample[], a: Call, b: Call) => {
    const ratios = rows.map((row) => row[a] / row[b])
    return `${median(ratios).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`
  }
  for (const shape of Object.keys(SHAPES) as Shape[]) {
    for (const kind of ['present', 'absent'] as const) {
      const rows = samples.get(`${shape} ${kind}`)!
      const task = `has ${label} (${kind}, random order, fresh keys ${SHAPES[shape].title})`
      report.add({
        suite: 'memory',
        task: task.replace(/^has /, 'hasMany '),
        subject: 'bloomkit',
        batch: BATCH,
        opsPerSecond: median(rows.map((row) => row.many)),
        notes: `${paired(rows, 'many', 'loop')} bloomkit's loop of has(), ${paired(rows, 'many', 'peer')} bloomfilter's loop of test() (issue 36 targets ≥ 2× each); ${rows.length} paired rounds of ${FRESH_KEYS / 1000}k keys made afresh for each call`,
      })
      report.add({ suite: 'memory', task, subject: 'bloomkit', batch: 1, opsPerSecond: median(rows.map((row) => row.loop)) })
      report.add({ suite: 'memory', task, subject: 'bloomfilter@1.1.0', batch: 1, opsPerSecond: median(rows.map((row) => row.peer)) })
    }
  }
}
