import { MemoryBloomFilter, type LayeredMemoryFilter } from '@bloomkit/memory-backend'
import BloomFilters from 'bloom-filters'
import { chunks, cycle, median, medianOpsPerSecond, randomUserKeys, userKeys } from './measure.js'
import type { Report } from './report.js'

/** The first layer's capacity: every scalable subject starts here and grows to 64× it. */
const FIRST_CAPACITY = 10_000
const ERROR_RATE = 0.01
const SCALES = [1, 8, 64] as const
const CHUNK = 10_000
const PROBES = 100_000
/** Paired rounds per figure: subjects take turns within a round, and ratios are taken per round. */
const ROUNDS = Number(process.env.LAYERED_ROUNDS ?? 25)

interface Subject {
  readonly name: string
  add(key: string): unknown
  has(key: string): boolean
  /** Bits the filter holds now. */
  bits(): number
  /** Layers (1 for a fixed filter). */
  layers(): number
}

function bloomkitScalable(filter: LayeredMemoryFilter, growth: number): Subject {
  return {
    name: `bloomkit scalable, growth ${growth}`,
    add: (k) => filter.add(k),
    has: (k) => filter.has(k),
    bits: () => filter.byteLength * 8,
    layers: () => filter.layers.length,
  }
}

/**
 * Scalable filters grown to 1×, 8× and 64× their first capacity (10 000 keys at 1 %), against a
 * fixed bloomkit filter sized for the final count and against `bloom-filters`' ScalableBloomFilter
 * (growth 2, tightening 0.5, as bloomkit's growth-2 subject), all in the same run: one timed fill
 * pass for adds (a re-add is a different operation), then paired rounds of checks of absent and
 * present keys, and the bits each holds.
 */
export async function runLayeredBenchmarks(report: Report): Promise<void> {
  for (const scale of SCALES) {
    const n = FIRST_CAPACITY * scale
    const label = `${scale}×`
    const keys = userKeys(0, n)
    const absent = chunks(userKeys(n, n + PROBES), CHUNK)
    const present = chunks(randomUserKeys(0, n, PROBES, 7), CHUNK)

    const fixed = await MemoryBloomFilter.create({ capacity: n, errorRate: ERROR_RATE })
    const growth2 = await MemoryBloomFilter.create({ capacity: FIRST_CAPACITY, errorRate: ERROR_RATE, growth: 2 })
    const growth4 = await MemoryBloomFilter.create({ capacity: FIRST_CAPACITY, errorRate: ERROR_RATE, growth: 4 })
    const peer = BloomFilters.ScalableBloomFilter.create(FIRST_CAPACITY, ERROR_RATE, 0.5)
    const subjects: Subject[] = [
      { name: 'bloomkit fixed, sized for the final count', add: (k) => fixed.add(k), has: (k) => fixed.has(k), bits: () => fixed.parameters.bits, layers: () => 1 },
      bloomkitScalable(growth2, 2),
      bloomkitScalable(growth4, 4),
      {
        name: 'bloom-filters@3.0.4 ScalableBloomFilter',
        add: (k) => peer.add(k),
        has: (k) => peer.has(k),
        bits: () => peer._filters.reduce((sum, filter) => sum + filter.size, 0),
        layers: () => peer._filters.length,
      },
    ]
    const fillRates = new Map<string, number>()
    const falsePositives = new Map<string, number>()
    for (const subject of subjects) {
      const start = performance.now()
      for (let i = 0; i < keys.length; i++) subject.add(keys[i])
      fillRates.set(subject.name, keys.length / ((performance.now() - start) / 1000))
      let positives = 0
      for (const chunk of absent) for (const key of chunk) if (subject.has(key)) positives++
      falsePositives.set(subject.name, positives / PROBES)
    }

    const tasks = { absent, present }
    const samples = new Map<string, { absent: number[]; present: number[] }>(subjects.map((s) => [s.name, { absent: [], present: [] }]))
    const timed = new Map(
      subjects.map((subject) => {
        const next = { absent: cycle(tasks.absent), present: cycle(tasks.present) }
        const run = (task: 'absent' | 'present') => () => {
          const c = next[task]()
          let x = 0
          for (let i = 0; i < c.length; i++) x += subject.has(c[i]) ? 1 : 0
          return x
        }
        return [subject.name, { absent: run('absent'), present: run('present') }]
      }),
    )
    for (let round = 0; round < ROUNDS; round++) {
      for (const task of ['absent', 'present'] as const) {
        const order = round % 2 === 0 ? subjects : [...subjects].reverse()
        for (const subject of order) {
          const rate = await medianOpsPerSecond(`${subject.name} has ${task} ${label}`, CHUNK, timed.get(subject.name)![task], {
            time: 0,
            iterations: 1,
            warmup: round === 0,
          })
          samples.get(subject.name)![task].push(rate)
        }
      }
    }

    const fixedBits = fixed.parameters.bits
    const fixedSamples = samples.get(subjects[0].name)!
    for (const subject of subjects) {
      const own = samples.get(subject.name)!
      const bits = subject.bits()
      const paired = (task: 'absent' | 'present') => median(own[task].map((rate, round) => rate / fixedSamples[task][round]))
      report.add({
        suite: 'layered',
        task: `add ${label} first capacity (${n.toLocaleString('en')} keys, one pass)`,
        subject: subject.name,
        opsPerSecond: fillRates.get(subject.name)!,
        notes: `${subject.layers()} layer(s), ${(bits / 8 / 1024).toFixed(1)} KiB (${(bits / fixedBits).toFixed(2)}× fixed's bits), FP ${(falsePositives.get(subject.name)! * 100).toFixed(3)} % (${PROBES / 1000}k absent keys)`,
      })
      report.add({
        suite: 'layered',
        task: `has ${label} (absent, single calls)`,
        subject: subject.name,
        opsPerSecond: median(own.absent),
        notes: subject === subjects[0] ? '' : `${paired('absent').toFixed(2)}× fixed (median of ${ROUNDS} paired rounds)`,
      })
      report.add({
        suite: 'layered',
        task: `has ${label} (present, random order, single calls)`,
        subject: subject.name,
        opsPerSecond: median(own.present),
        notes: subject === subjects[0] ? '' : `${paired('present').toFixed(2)}× fixed (median of ${ROUNDS} paired rounds)`,
      })
    }
    const peerSamples = samples.get(subjects[3].name)!
    const ours = samples.get(subjects[1].name)!
    const versusPeer = (task: 'absent' | 'present') => median(ours[task].map((rate, round) => rate / peerSamples[task][round]))
    report.add({
      suite: 'layered',
      task: `ratio ${label}`,
      subject: 'bloomkit growth 2 / bloom-filters',
      opsPerSecond: 0,
      notes:
        `has absent ${versusPeer('absent').toFixed(1)}×, has present ${versusPeer('present').toFixed(1)}×, ` +
        `add ${(fillRates.get(subjects[1].name)! / fillRates.get(subjects[3].name)!).toFixed(1)}× (one pass); median of ${ROUNDS} paired rounds`,
    })
    for (const filter of [fixed, growth2, growth4]) filter.close()
  }
}
