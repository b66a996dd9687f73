import { sizeFilter } from '@bloomkit/core'
import { layerPolicies } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import BloomFilters from 'bloom-filters'
import { Redis } from 'ioredis'
import { startRedisServer } from '../../test-support/dist/redis-servers.js'
import { chunks, cycle, median, medianOpsPerSecond, randomUserKeys, userKeys, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'

const { layerCapacity, layerParameters, layerPolicyOf } = layerPolicies

/** The first layer's capacity: every scalable subject starts here and grows to 64× it. */
const FIRST_CAPACITY = 10_000
const ERROR_RATE = 0.01
const SCALES = [1, 8, 64] as const
const CHUNK = 10_000
const PROBES = 100_000
/** Paired rounds per figure: subjects take turns within a round, and ratios are taken per round; a quick run (`--quick`) takes 5. */
let ROUNDS = Number(process.env.LAYERED_ROUNDS ?? 25)
/**
 * The largest scale `bloom-filters`' ScalableBloomFilter is filled to: its add recounts the newest
 * layer's load on every call, so it slows as the filter grows (~7 k adds/s at 10 000 keys, ~280/s at
 * 80 000 here); 640 000 keys would take hours.
 */
const PEER_MAX_SCALE = 8

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
    layers: () => filter.layers().length,
  }
}

/**
 * A scalable filter's bits against a fixed filter's for the same count over the growth step that
 * `n` keys fall in: just before its newest layer opened, at `n`, and when that layer is full. The
 * ratio is a sawtooth: it jumps when a layer opens (the new layer is sized for growth× the keys of
 * the one before, and holds almost none of them yet) and falls as the layer fills. Computed from
 * the sizing (bits do not depend on the keys).
 */
function growthStepBits(growth: number, n: number): string {
  const policy = layerPolicyOf({ capacity: FIRST_CAPACITY, errorRate: ERROR_RATE, growth, seed: 1 })
  // Layers open until their capacities reach n: the last one opened at keysBefore keys.
  let layers = 0
  let keysBefore = 0
  let bitsBefore = 0
  let newest = 0
  for (let keys = 0; keys < n; layers++) {
    keysBefore = keys
    bitsBefore += newest
    newest = layerParameters(policy, layers).bits
    keys += layerCapacity(policy, layers)
  }
  const keysFull = keysBefore + layerCapacity(policy, layers - 1)
  const versus = (count: number, bits: number) => (bits / sizeFilter({ capacity: count, errorRate: ERROR_RATE, seed: 1 }).bits).toFixed(2)
  return (
    `bits against a fixed filter for the same count, over this growth step: ${versus(keysBefore, bitsBefore)}× at ${keysBefore.toLocaleString('en')} keys ` +
    `(${layers - 1} layers, just before the next opened), ${versus(n, bitsBefore + newest)}× at ${n.toLocaleString('en')}, ` +
    `${versus(keysFull, bitsBefore + newest)}× at ${keysFull.toLocaleString('en')} (${layers} layers, the last full)`
  )
}

/**
 * Scalable filters grown to 1×, 8× and 64× their first capacity (10 000 keys at 1 %), against a
 * fixed bloomkit filter sized for the final count and against `bloom-filters`' ScalableBloomFilter
 * (growth 2, tightening 0.5, as bloomkit's growth-2 subject), all in the same run: one timed fill
 * pass for adds (a re-add is a different operation), then paired rounds of checks of absent and
 * present keys, and the bits each holds.
 */
export async function runLayeredBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  // A quick run grows to 8× only, and fills the peer to 1× only: its fill to 8× alone takes ~50 s.
  if (quick) ROUNDS = 5
  const scales = quick ? [1, 8] : SCALES
  const peerMaxScale = quick ? 1 : PEER_MAX_SCALE
  for (const scale of scales) {
    const n = FIRST_CAPACITY * scale
    const label = `${scale}×`
    const keys = userKeys(0, n)
    const absent = chunks(userKeys(n, n + PROBES), CHUNK)
    const present = chunks(randomUserKeys(0, n, PROBES, 7), CHUNK)

    const fixed = await MemoryBloomFilter.create({ capacity: n, errorRate: ERROR_RATE })
    const growth2 = await LayeredMemoryFilter.create({ capacity: FIRST_CAPACITY, errorRate: ERROR_RATE, growth: 2 })
    const growth4 = await LayeredMemoryFilter.create({ capacity: FIRST_CAPACITY, errorRate: ERROR_RATE, growth: 4 })
    const peer = BloomFilters.ScalableBloomFilter.create(FIRST_CAPACITY, ERROR_RATE, 0.5)
    const withPeer = scale <= peerMaxScale
    const all: Subject[] = [
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
    const subjects = all.slice(0, withPeer ? 4 : 3)
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
        batch: 1,
        opsPerSecond: fillRates.get(subject.name)!,
        notes: `${subject.layers()} layer(s), ${(bits / 8 / 1024).toFixed(1)} KiB (${(bits / fixedBits).toFixed(2)}× fixed's bits), FP ${(falsePositives.get(subject.name)! * 100).toFixed(3)} % (${PROBES / 1000}k absent keys)`,
      })
      report.add({
        suite: 'layered',
        task: `has ${label} (absent, single calls)`,
        subject: subject.name,
        batch: 1,
        opsPerSecond: median(own.absent),
        notes: subject === subjects[0] ? '' : `${paired('absent').toFixed(2)}× fixed (median of ${ROUNDS} paired rounds)`,
      })
      report.add({
        suite: 'layered',
        task: `has ${label} (present, random order, single calls)`,
        subject: subject.name,
        batch: 1,
        opsPerSecond: median(own.present),
        notes: subject === subjects[0] ? '' : `${paired('present').toFixed(2)}× fixed (median of ${ROUNDS} paired rounds)`,
      })
    }
    for (const [growth, filter] of [[2, growth2], [4, growth4]] as const) {
      if (filter.layers().length < 2) continue
      report.add({ suite: 'layered', task: `bits ${label} (growth step)`, subject: `bloomkit scalable, growth ${growth}`, batch: 1, opsPerSecond: 0, notes: growthStepBits(growth, n) })
    }
    if (!withPeer) {
      report.add({
        suite: 'layered',
        task: `ratio ${label}`,
        subject: 'bloomkit growth 2 / bloom-filters',
        batch: 1,
        opsPerSecond: 0,
        notes: scale <= PEER_MAX_SCALE
          ? 'not measured in a quick run: bloom-filters\' ScalableBloomFilter add slows as it grows (the full run measures it up to 8×)'
          : `not measured: bloom-filters' ScalableBloomFilter add slows as it grows (see the ${PEER_MAX_SCALE}× rows); filling ${n.toLocaleString('en')} keys would take hours`,
      })
      for (const filter of [fixed, growth2, growth4]) filter.close()
      continue
    }
    const peerSamples = samples.get(subjects[3].name)!
    const ours = samples.get(subjects[1].name)!
    const versusPeer = (task: 'absent' | 'present') => median(ours[task].map((rate, round) => rate / peerSamples[task][round]))
    report.add({
      suite: 'layered',
      task: `ratio ${label}`,
      subject: 'bloomkit growth 2 / bloom-filters',
      batch: 1,
      opsPerSecond: 0,
      notes:
        `has absent ${versusPeer('absent').toFixed(1)}×, has present ${versusPeer('present').toFixed(1)}×, ` +
        `add ${(fillRates.get(subjects[1].name)! / fillRates.get(subjects[3].name)!).toFixed(1)}× (one pass); median of ${ROUNDS} paired rounds`,
    })
    for (const filter of [fixed, growth2, growth4]) filter.close()
  }
  await runLayeredRedisBenchmarks(report, quick)
}

/** Redis: paired rounds per figure (each round a few hundred single calls and a few batches per subject); a quick run takes 3. */
let REDIS_ROUNDS = Number(process.env.LAYERED_REDIS_ROUNDS ?? 9)
const REDIS_SINGLE_CALLS = 500
const REDIS_BATCH = 1000

/**
 * Redis at 64× the first capacity (8× in a quick run): a scalable filter (growth 2 and 4) against a
 * fixed one sized for the final count, on one throwaway server. Checks of absent keys as single
 * awaited calls and as batches of 1000, in paired rounds.
 */
export async function runLayeredRedisBenchmarks(report: Report, quick = false): Promise<void> {
  if (quick) REDIS_ROUNDS = 3
  const server = await startRedisServer()
  const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
  redis.on('error', () => {})
  try {
    const scale = quick ? 8 : 64
    const n = FIRST_CAPACITY * scale
    const keys = userKeys(0, n)
    const absent = userKeys(n, n + 100_000)
    const fixed = await RedisBloomFilter.create(redis, 'bench:fixed', { capacity: n, errorRate: ERROR_RATE })
    const growth2 = await RedisBloomFilter.create(redis, 'bench:growth2', { capacity: FIRST_CAPACITY, errorRate: ERROR_RATE, growth: 2 })
    const growth4 = await RedisBloomFilter.create(redis, 'bench:growth4', { capacity: FIRST_CAPACITY, errorRate: ERROR_RATE, growth: 4 })
    const subjects = [
      { name: 'bloomkit fixed, sized for the final count', filter: fixed, bits: async () => fixed.parameters.bits, layers: async () => 1 },
      { name: 'bloomkit scalable, growth 2', filter: growth2, bits: async () => (await growth2.layers()).reduce((sum, l) => sum + l.parameters.bits, 0), layers: async () => (await growth2.layers()).length },
      { name: 'bloomkit scalable, growth 4', filter: growth4, bits: async () => (await growth4.layers()).reduce((sum, l) => sum + l.parameters.bits, 0), layers: async () => (await growth4.layers()).length },
    ]
    const fills = new Map<string, number>()
    for (const subject of subjects) {
      const start = performance.now()
      for (const batch of chunks(keys, REDIS_BATCH)) await subject.filter.addMany(batch)
      fills.set(subject.name, n / ((performance.now() - start) / 1000))
    }
    const singles = new Map(subjects.map((s) => [s.name, [] as number[]]))
    const batches = new Map(subjects.map((s) => [s.name, [] as number[]]))
    const absentBatches = chunks(absent, REDIS_BATCH)
    let cursor = 0
    for (let round = 0; round < REDIS_ROUNDS; round++) {
      const order = round % 2 === 0 ? subjects : [...subjects].reverse()
      for (const subject of order) {
        let start = performance.now()
        for (let i = 0; i < REDIS_SINGLE_CALLS; i++) await subject.filter.has(absent[(cursor + i) % absent.length])
        singles.get(subject.name)!.push(REDIS_SINGLE_CALLS / ((performance.now() - start) / 1000))
        start = performance.now()
        for (let i = 0; i < 5; i++) await subject.filter.hasMany(absentBatches[(round * 5 + i) % absentBatches.length])
        batches.get(subject.name)!.push((5 * REDIS_BATCH) / ((performance.now() - start) / 1000))
      }
      cursor += REDIS_SINGLE_CALLS
    }
    const fixedBits = fixed.parameters.bits
    for (const subject of subjects) {
      const bits = await subject.bits()
      const paired = (samples: Map<string, number[]>) => median(samples.get(subject.name)!.map((rate, round) => rate / samples.get(subjects[0].name)![round]))
      const versus = subject === subjects[0] ? '' : ` (${'%'}× fixed, median of ${REDIS_ROUNDS} paired rounds)`
      report.add({
        suite: 'layered',
        task: `redis: addMany ${scale}× first capacity (${n.toLocaleString('en')} keys, batches of ${REDIS_BATCH}, one pass)`,
        subject: subject.name,
        batch: REDIS_BATCH,
        opsPerSecond: fills.get(subject.name)!,
        notes: `${await subject.layers()} layer(s), ${(bits / 8 / 1024).toFixed(1)} KiB (${(bits / fixedBits).toFixed(2)}× fixed's bits)`,
      })
      report.add({
        suite: 'layered',
        task: `redis: has ${scale}× (absent, single awaited calls)`,
        subject: subject.name,
        batch: 1,
        opsPerSecond: median(singles.get(subject.name)!),
        notes: versus.replace('%', paired(singles).toFixed(2)),
      })
      report.add({
        suite: 'layered',
        task: `redis: hasMany ${scale}× (absent, batches of ${REDIS_BATCH})`,
        subject: subject.name,
        batch: REDIS_BATCH,
        opsPerSecond: median(batches.get(subject.name)!),
        notes: versus.replace('%', paired(batches).toFixed(2)),
      })
    }
    for (const subject of subjects) await subject.filter.destroy()
  } finally {
    redis.disconnect()
    await server.stop()
  }
}
