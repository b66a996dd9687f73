import { blockStart } from '@bloomkit/core/spec'
import { createKeyHasher, KeyHasher } from '@bloomkit/core/store'
import type { FilterParameters } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { openSnapshot } from '@bloomkit/memory-backend/reader'
import { BloomFilter as Bloomfilter } from 'bloomfilter'
import BloomFilters from 'bloom-filters'
import { chunks, cycle, median, medianOpsPerSecond, randomUserKeys, ratio, sizeLabel, userKeys, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'
import { runFreshKeyRows } from './memory-fresh.js'

const CHUNK = 100_000
const PROBES = 1_000_000
/** Rounds of alternating measurements per figure (a quick run takes fewer). */
const ROUNDS = 75
const QUICK_ROUNDS = 9
/** Paired rounds of the fresh-key rows (memory-fresh.ts), each 12 calls of 50k keys made for them. */
const FRESH_ROUNDS = 25
const QUICK_FRESH_ROUNDS = 7
/** Timed calls (chunks of CHUNK keys) per subject, task and round: one, so that a pair is 5–25 ms apart. */
const CALLS_PER_ROUND = 1

interface Subject {
  readonly name: string
  readonly bytes: number
  add(key: string): unknown
  has(key: string): boolean
}

/** Adds every key once (the fill), timed as a single pass. */
function fill(subject: Subject, keys: readonly string[]): number {
  const start = performance.now()
  for (let i = 0; i < keys.length; i++) subject.add(keys[i])
  return keys.length / ((performance.now() - start) / 1000)
}

function falsePositiveRate(subject: Subject, probes: readonly string[]): number {
  let positives = 0
  for (let i = 0; i < probes.length; i++) if (subject.has(probes[i])) positives++
  return positives / probes.length
}

/**
 * What each subject is timed on. Checks run in key order and in random order: `bloomfilter`'s FNV-1a
 * moves the first probe of `user:20000000`, `user:20000001`, … by a few hundred bits, so in key order
 * most of its first probes hit a cache line the previous key just loaded; real traffic is not in order.
 */
const TASKS = {
  add: { title: 'add', keys: 'present' },
  has: { title: 'has (present)', keys: 'present' },
  miss: { title: 'has (absent)', keys: 'absent' },
  hasRandom: { title: 'has (present, random order)', keys: 'presentRandom' },
  missRandom: { title: 'has (absent, random order)', keys: 'absentRandom' },
} as const
type Task = keyof typeof TASKS
type KeySet = (typeof TASKS)[Task]['keys']

/**
 * The memory backend against `bloomfilter`@1.1.0 and `bloom-filters`@3 on the same keys, with the
 * same bits and hashes for `bloomfilter` (bloom-filters sizes itself from n and p).
 */
export async function runMemoryBenchmarks(report: Report, { quick, forRuntimeTable = false }: SuiteOptions): Promise<void> {
  // A quick run: a 200k filter, as bloom-filters' fill of 1M keys alone takes ~10 s.
  const sizes = quick ? [200_000] : [1_000_000, 10_000_000]
  const rounds = quick ? QUICK_ROUNDS : ROUNDS
  report.describeChart({
    id: 'memory',
    title: 'In memory: keys per second, single calls',
    subtitle: 'bloomkit memory backend vs bloomfilter@1.1.0 (same bits and hashes) and bloom-filters@3.0.4; p = 1 %',
  })
  const largest = Math.max(...sizes)
  const allKeys = userKeys(0, largest)
  const probes = userKeys(largest, largest + PROBES)
  const absentRandom = chunks(randomUserKeys(largest, largest + PROBES, PROBES, 2), CHUNK)
  for (const n of sizes) {
    const label = sizeLabel(n)
    const keys = n === largest ? allKeys : allKeys.slice(0, n)
    const keySets: Record<KeySet, string[][]> = {
      present: chunks(keys, CHUNK),
      absent: chunks(probes, CHUNK),
      presentRandom: chunks(randomUserKeys(0, n, PROBES, 1), CHUNK),
      absentRandom,
    }

    const ours = await MemoryBloomFilter.create({ capacity: n, errorRate: 0.01 })
    const { bits, hashes } = ours.parameters
    const peer = new Bloomfilter(bits, hashes)
    const subjects: Subject[] = [
      { name: 'bloomkit', bytes: ours.byteLength, add: (k) => ours.add(k), has: (k) => ours.has(k) },
      { name: 'bloomfilter@1.1.0', bytes: peer.buckets.byteLength, add: (k) => peer.add(k), has: (k) => peer.test(k) },
    ]
    const firstProbes = { bloomkit: await bloomkitFirstProbe(ours.parameters), 'bloomfilter@1.1.0': (k: string) => peer.locations(k)[0] }
    type Rates = Record<Task, number>
    const tasks = new Map<string, { fp: number; fillRate: number; timed: Record<Task, () => unknown>; samples: Rates[] }>()
    for (const subject of subjects) {
      const fillRate = fill(subject, keys)
      const fp = falsePositiveRate(subject, probes)
      const timed = {} as Record<Task, () => unknown>
      for (const task of Object.keys(TASKS) as Task[]) {
        const next = cycle(keySets[TASKS[task].keys])
        // Direct calls, not through `subject`, so the closure does not sit in the timed loop.
        timed[task] = task === 'add'
          ? subject.name === 'bloomkit'
            ? () => { const c = next(); for (let i = 0; i < c.length; i++) ours.add(c[i]) }
            : () => { const c = next(); for (let i = 0; i < c.length; i++) peer.add(c[i]) }
          : subject.name === 'bloomkit'
            ? () => { const c = next(); let x = 0; for (let i = 0; i < c.length; i++) x += ours.has(c[i]) ? 1 : 0; return x }
            : () => { const c = next(); let x = 0; for (let i = 0; i < c.length; i++) x += peer.test(c[i]) ? 1 : 0; return x }
      }
      tasks.set(subject.name, { fp, fillRate, timed, samples: [] })
    }
    // The lead rows: keys made afresh in check order, flat and built, as applications pass them (issue 36 item 4).
    await runFreshKeyRows(report, { label, ours, peer, present: n, absentFrom: largest, rounds: quick ? QUICK_FRESH_ROUNDS : FRESH_ROUNDS })
    // Subjects take turns, task by task, over many short rounds, so that a slow spell of this shared
    // machine (it swings by up to 2x within a second) hits both alike; which goes first alternates.
    // Each figure is the median over the rounds.
    // hasMany in batches of 1000 (random order) and the hash alone, timed in the same rounds (issue 25);
    // the snapshot reader's has on the filter's export, beside the filter's own (issue 37).
    const reader = openSnapshot(ours.export())
    const batched = {
      hasMany: batchedCall(ours, keySets.presentRandom),
      missMany: batchedCall(ours, keySets.absentRandom),
      hashOnly: hashOnlyCall(ours, keySets.presentRandom),
      readerHas: loopCall((k) => reader.has(k), keySets.presentRandom),
      readerMiss: loopCall((k) => reader.has(k), keySets.absentRandom),
    }
    const batchedRounds: Array<Record<keyof typeof batched, number>> = []
    for (let round = 0; round < rounds; round++) {
      report.progress(round, rounds, `${label}: paired round ${round + 1}`)
      const sample = {} as Record<keyof typeof batched, number>
      for (const [what, call] of Object.entries(batched) as Array<[keyof typeof batched, () => unknown]>) {
        sample[what] = await medianOpsPerSecond(`bloomkit ${what} ${label}`, CHUNK, call, { time: 0, iterations: CALLS_PER_ROUND, warmup: round === 0 })
      }
      batchedRounds.push(sample)
      for (const task of Object.keys(TASKS) as Task[]) {
        const order = round % 2 === 0 ? [...tasks] : [...tasks].reverse()
        for (const [name, entry] of order) {
          const rate = await medianOpsPerSecond(`${name} ${task} ${label}`, CHUNK, entry.timed[task], {
            time: 0,
            iterations: CALLS_PER_ROUND,
            warmup: round === 0,
          })
          entry.samples[round] ??= {} as Rates
          entry.samples[round][task] = rate
        }
      }
    }
    for (const subject of subjects) {
      const { fp, fillRate, samples } = tasks.get(subject.name)!
      const nearby = nearbyShare(firstProbes[subject.name as keyof typeof firstProbes], probes)
      for (const task of Object.keys(TASKS) as Task[]) {
        const notes = task === 'add'
          ? `${(subject.bytes / 2 ** 20).toFixed(2)} MiB bits, k=${hashes}, FP ${(fp * 100).toFixed(3)} %, fill pass ${(fillRate / 1e6).toFixed(2)} M/s`
          : task === 'miss'
            ? `first probe within 4 KiB of the previous key's: ${(nearby * 100).toFixed(0)} % of keys`
            : ''
        report.add({
          suite: 'memory',
          task: `${TASKS[task].title.replace(/^(\w+)/, `$1 ${label}`)}`,
          subject: subject.name,
          batch: 1,
          opsPerSecond: median(samples.map((s) => s[task])),
          notes,
          chart: task === 'has' || task === 'miss' ? undefined : { chart: 'memory', group: `${TASKS[task].title}, ${label} keys` },
          headline: subject.name === 'bloomkit' && n === sizes[0] && (task === 'add' || task === 'hasRandom')
            ? `memory: ${TASKS[task].title}, ${label}-key filter`
            : undefined,
        })
      }
    }
    // Each round measures both libraries back to back, so the round's ratio is untouched by the
    // machine's slower and faster spells: report the median of the rounds' ratios and their range.
    const oursRounds = tasks.get('bloomkit')!.samples
    const theirRounds = tasks.get('bloomfilter@1.1.0')!.samples
    const pairedRatio = (task: Task) => {
      const ratios = oursRounds.map((sample, round) => sample[task] / theirRounds[round][task])
      return `${TASKS[task].title} ${median(ratios).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`
    }
    report.add({
      suite: 'memory',
      task: `ratio ${label}`,
      subject: 'bloomkit / bloomfilter',
      batch: 1,
      opsPerSecond: 0,
      notes: `${(Object.keys(TASKS) as Task[]).map(pairedRatio).join(', ')}; median of ${rounds} paired rounds`,
    })

    // The issue's targets, each a ratio of figures from the same rounds (median over rounds).
    const roundRatio = (ours: (round: number) => number, theirs: (round: number) => number) => {
      const ratios = batchedRounds.map((_, round) => ours(round) / theirs(round))
      return `${median(ratios).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`
    }
    const ownRounds = tasks.get('bloomkit')!.samples
    const peerRounds = tasks.get('bloomfilter@1.1.0')!.samples
    for (const [what, single, keysLabel] of [['hasMany', 'hasRandom', 'present'], ['missMany', 'missRandom', 'absent']] as const) {
      report.add({
        suite: 'memory',
        task: `hasMany ${label} (${keysLabel}, random order)`,
        subject: 'bloomkit',
        batch: BATCH,
        opsPerSecond: median(batchedRounds.map((r) => r[what])),
        notes: `${roundRatio((r) => batchedRounds[r][what], (r) => ownRounds[r][single])} bloomkit's loop of has() (target ≥ 2×), ${roundRatio((r) => batchedRounds[r][what], (r) => peerRounds[r][single])} bloomfilter's loop of test() (target ≥ 2.5×); paired rounds`,
      })
    }
    for (const [what, single, keysLabel] of [['readerHas', 'hasRandom', 'present'], ['readerMiss', 'missRandom', 'absent']] as const) {
      report.add({
        suite: 'memory',
        task: `has ${label} (${keysLabel}, random order)`,
        subject: 'bloomkit reader',
        batch: 1,
        opsPerSecond: median(batchedRounds.map((r) => r[what])),
        notes: `openSnapshot(export()).has: ${roundRatio((r) => batchedRounds[r][what], (r) => ownRounds[r][single])} the full filter's has() (target ≥ 1×); paired rounds`,
      })
    }
    report.add({
      suite: 'memory',
      task: `hash alone ${label} (present keys, random order)`,
      subject: 'bloomkit KeyHasher',
      batch: 1,
      opsPerSecond: median(batchedRounds.map((r) => r.hashOnly)),
      notes: `the hash is ${roundRatio((r) => ownRounds[r].hasRandom, (r) => batchedRounds[r].hashOnly).replace(/×/, '')} of a full has() (time share); the rest is the memory access`,
    })
    report.add({
      suite: 'memory',
      task: `ratio ${label}: single-call has, random order`,
      subject: 'bloomkit / bloomfilter',
      batch: 1,
      opsPerSecond: 0,
      notes: `present ${roundRatio((r) => ownRounds[r].hasRandom, (r) => peerRounds[r].hasRandom)}, absent ${roundRatio((r) => ownRounds[r].missRandom, (r) => peerRounds[r].missRandom)} (issue 25 target at 10M: ≥ 1.3×)`,
    })

    const batchAdd = cycle(keySets.present)
    const batchHas = cycle(keySets.present)
    const addMany = await medianOpsPerSecond(`bloomkit addMany ${label}`, CHUNK, () => ours.addMany(batchAdd()))
    const hasMany = await medianOpsPerSecond(`bloomkit hasMany ${label}`, CHUNK, () => ours.hasMany(batchHas()))
    report.add({ suite: 'memory', task: `addMany ${label}`, subject: 'bloomkit', batch: CHUNK, opsPerSecond: addMany })
    report.add({ suite: 'memory', task: `hasMany ${label}`, subject: 'bloomkit', batch: CHUNK, opsPerSecond: hasMany })

    const o = { add: median(oursRounds.map((s) => s.add)), has: median(oursRounds.map((s) => s.has)) }
    if (n <= 1_000_000 && !forRuntimeTable) await runBloomFilters(report, label, keys, probes, o)
  }
  if (!quick && !forRuntimeTable) await runHuge(report)
}

/** The 100M-key filter (~120 MiB, far past every cache): full runs only. */
const HUGE = 100_000_000
const HUGE_ROUNDS = 15

/**
 * A filter of {@link HUGE} keys, bloomkit beside bloomfilter: fill (keys made on the fly, as an
 * array of 100M strings would not fit), then random-order checks in paired rounds, single calls and
 * hasMany of 1000.
 */
async function runHuge(report: Report): Promise<void> {
  const label = sizeLabel(HUGE)
  const ours = await MemoryBloomFilter.create({ capacity: HUGE, errorRate: 0.01 })
  const peer = new Bloomfilter(ours.parameters.bits, ours.parameters.hashes)
  for (let i = 0; i < HUGE; i++) {
    if (i % 5_000_000 === 0) report.progress(i, HUGE, `${label}: filling`)
    const key = `user:${i}`
    ours.add(key)
    peer.add(key)
  }
  const present = chunks(randomUserKeys(0, HUGE, PROBES, 3), CHUNK)
  const absent = chunks(randomUserKeys(HUGE, 2 * HUGE, PROBES, 4), CHUNK)
  const calls = {
    ours: { present: loopCall((k) => ours.has(k), present), absent: loopCall((k) => ours.has(k), absent) },
    peer: { present: loopCall((k) => peer.test(k), present), absent: loopCall((k) => peer.test(k), absent) },
    many: { present: batchedCall(ours, present), absent: batchedCall(ours, absent) },
  }
  const samples: Array<Record<string, number>> = []
  for (let round = 0; round < HUGE_ROUNDS; round++) {
    report.progress(round, HUGE_ROUNDS, `${label}: paired round ${round + 1}`)
    const sample: Record<string, number> = {}
    const order = round % 2 === 0 ? (['ours', 'peer', 'many'] as const) : (['many', 'peer', 'ours'] as const)
    for (const who of order) {
      for (const keys of ['present', 'absent'] as const) {
        sample[`${who} ${keys}`] = await medianOpsPerSecond(`${who} ${keys} ${label}`, CHUNK, calls[who][keys], { time: 0, iterations: 1, warmup: round === 0 })
      }
    }
    samples.push(sample)
  }
  const figure = (name: string) => median(samples.map((s) => s[name]))
  const versus = (a: string, b: string) => {
    const ratios = samples.map((s) => s[a] / s[b])
    return `${median(ratios).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`
  }
  for (const keys of ['present', 'absent'] as const) {
    const task = `has ${label} (${keys}, random order)`
    report.add({ suite: 'memory', task, subject: 'bloomkit', batch: 1, opsPerSecond: figure(`ours ${keys}`), notes: `${(ours.byteLength / 2 ** 20).toFixed(0)} MiB bits; ${versus(`ours ${keys}`, `peer ${keys}`)} bloomfilter` })
    report.add({ suite: 'memory', task, subject: 'bloomfilter@1.1.0', batch: 1, opsPerSecond: figure(`peer ${keys}`) })
    report.add({ suite: 'memory', task: `hasMany ${label} (${keys}, random order)`, subject: 'bloomkit', batch: BATCH, opsPerSecond: figure(`many ${keys}`), notes: `${versus(`many ${keys}`, `ours ${keys}`)} bloomkit's loop of has(), ${versus(`many ${keys}`, `peer ${keys}`)} bloomfilter's loop; ${HUGE_ROUNDS} paired rounds` })
  }
}

/** One timed call: a chunk of keys, one `check` each. */
function loopCall(check: (key: string) => boolean, keyChunks: string[][]): () => number {
  const next = cycle(keyChunks)
  return () => {
    const chunk = next()
    let x = 0
    for (let i = 0; i < chunk.length; i++) x += check(chunk[i]) ? 1 : 0
    return x
  }
}

/** Keys per hasMany call in the batched rows: what services send. */
const BATCH = 1000

/** One timed call: a chunk of keys checked by hasMany in batches of {@link BATCH}. */
function batchedCall(filter: MemoryBloomFilter, keyChunks: string[][]): () => number {
  const batches = keyChunks.map((chunk) => Array.from({ length: chunk.length / BATCH }, (_, i) => chunk.slice(i * BATCH, (i + 1) * BATCH)))
  const next = cycle(batches)
  return () => {
    let x = 0
    for (const batch of next()) x += filter.hasMany(batch).length
    return x
  }
}

/** One timed call: a chunk of keys hashed (both lanes) and nothing else, with the filter's own hasher. */
function hashOnlyCall(filter: MemoryBloomFilter, keyChunks: string[][]): () => number {
  const hasher = new KeyHasher(filter.parameters.seed)
  const next = cycle(keyChunks)
  return () => {
    const chunk = next()
    let x = 0
    for (let i = 0; i < chunk.length; i++) {
      hasher.hash(chunk[i])
      x ^= hasher.pair[0]
    }
    return x
  }
}

/** Where bloomkit's check of a key first reads: the first bit of its block (one shard here). */
async function bloomkitFirstProbe(parameters: FilterParameters): Promise<(key: string) => number> {
  const hasher = await createKeyHasher(parameters.seed)
  return (key) => {
    hasher.hash(key)
    return blockStart(hasher.a, parameters.bits)
  }
}

/** The share of keys whose first probe lies within 4 KiB (32 768 bits) of the previous key's. */
function nearbyShare(firstProbe: (key: string) => number, keys: readonly string[]): number {
  let nearby = 0
  let previous = firstProbe(keys[0])
  for (let i = 1; i < keys.length; i++) {
    const probe = firstProbe(keys[i])
    if (Math.abs(probe - previous) < 32_768) nearby++
    previous = probe
  }
  return nearby / (keys.length - 1)
}

/** bloom-filters is ~100× slower: one timed fill pass and a bounded slice of checks. */
async function runBloomFilters(report: Report, label: string, keys: readonly string[], probes: readonly string[], ours: { add: number; has: number }) {
  const filter = BloomFilters.BloomFilter.create(keys.length, 0.01)
  const subject: Subject = { name: 'bloom-filters@3.0.4', bytes: Math.ceil(filter.size / 8), add: (k) => filter.add(k), has: (k) => filter.has(k) }
  const add = fill(subject, keys)
  const slice = keys.slice(0, 20_000)
  const has = await medianOpsPerSecond(`bloom-filters has ${label}`, slice.length, () => {
    let x = 0
    for (let i = 0; i < slice.length; i++) x += filter.has(slice[i]) ? 1 : 0
    return x
  }, { time: 500, iterations: 3 })
  const fp = falsePositiveRate(subject, probes.slice(0, 100_000))
  report.add({
    suite: 'memory',
    task: `add ${label}`,
    subject: subject.name,
    batch: 1,
    opsPerSecond: add,
    notes: `one fill pass; ${(subject.bytes / 2 ** 20).toFixed(2)} MiB bits, FP ${(fp * 100).toFixed(3)} % (100k probes); bloomkit is ${ratio(ours.add, add)}`,
    chart: { chart: 'memory', group: `add, ${label} keys` },
  })
  report.add({ suite: 'memory', task: `has ${label} (present)`, subject: subject.name, batch: 1, opsPerSecond: has, notes: `bloomkit is ${ratio(ours.has, has)} (key order)` })
}
