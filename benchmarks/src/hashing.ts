import { compileWasmXxh32, WASM_MIN_STRING_LENGTH } from '@bloomkit/core/spec'
import { KeyHasher } from '@bloomkit/core/store'
import { Worker } from 'node:worker_threads'
import xxhash from 'xxhash-wasm'
import { runBatchRows } from './hashing-batch.js'
import { KEYS, keySet, keySetIds } from './hashing-keys.js'
import type { HashingJob, HashingMeasurement, KeyShape } from './hashing-worker.js'
import { median, medianOpsPerSecond, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'

/** Fresh isolates (worker threads) per hasher, key set and shape, alternating which hasher goes first. */
const ISOLATES = 5
const QUICK_ISOLATES = 3
/** Each isolate warms up for, then samples for, this many ms of CPU time. */
const WORKER_TIMES = { warmupMs: 40, measureMs: 50 }
const QUICK_WORKER_TIMES = { warmupMs: 25, measureMs: 25 }
/** The issue's target: 16- to 64-char string keys at least this much faster than before it. */
const TARGET_SPEEDUP = 2
const TARGET_LENGTHS = [16, 32, 64]
const SHAPES: Record<KeyShape, string> = { flat: 'flat, as from I/O', built: 'built by a template literal' }
/** The floors under any string hash, measured like the hashers, for the target's lengths (flat keys only, to keep the suite short). */
const FLOORS = {
  chars: 'floor: read every char code (charCodeAt, 4 a step, XOR-folded; no hash)',
  encode: 'floor: TextEncoder.encodeInto into a reused buffer (no hash)',
} as const
type Floor = keyof typeof FLOORS

const workerUrl = new URL('./hashing-worker.js', import.meta.url)

/** Runs one measurement in a fresh worker thread, its own V8 isolate (see hashing-worker.ts for why). */
function measureInIsolate(job: HashingJob): Promise<HashingMeasurement> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(workerUrl, { workerData: job })
    let result: HashingMeasurement | undefined
    worker.once('message', (message) => (result = message as HashingMeasurement))
    worker.once('error', reject)
    worker.once('exit', (code) =>
      result !== undefined && code === 0 ? resolve(result) : reject(new Error(`hashing worker ${JSON.stringify(job)} exited with ${code}`)))
  })
}

interface StringRow {
  readonly now: number[]
  readonly before: number[]
  /** Median ns a key before / now, from the per-isolate medians. */
  readonly speedup: number
  /** The fastest isolate before / the fastest now: each hasher in the address layout that suits it (see README). */
  readonly fastest: number
}

/**
 * Cost per key of each hashing path (both 32-bit lanes): today's KeyHasher (what every add and has
 * runs) against the pure-JS pass before issue 25, each measured alone in fresh V8 isolates (worker
 * threads, several per side, alternating), for flat keys and keys built in code; beside them core's
 * WebAssembly XXH32 (a KeyHasher given it, as where wasmHashingSafe() holds), xxhash-wasm and
 * Uint8Array keys, timed in the main thread on the flat keys; and, at the target's lengths, what
 * any string hash must pay on Node 20 (reading every char code, or TextEncoder.encodeInto), so that
 * the target row shows whether 2× was reachable. Decides core's ENCODE_MIN_STRING_LENGTH, WASM_MIN_STRING_LENGTH and WASM_MIN_BYTE_LENGTH.
 */
export async function runHashingBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  const ids = keySetIds(quick)
  const isolates = quick ? QUICK_ISOLATES : ISOLATES
  const workerTimes = quick ? QUICK_WORKER_TIMES : WORKER_TIMES
  const time = quick ? { time: 50, iterations: 3 } : { time: 300, iterations: 5 }
  // Called directly: on Node < 22 core keeps xxhash-wasm off its hot path (see wasmHashingSafe).
  const wasm = await xxhash()
  const hasher = new KeyHasher(0)
  const withWasm = new KeyHasher(0, await compileWasmXxh32())
  const { seedA, seedB } = hasher
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  // Flat copies (decoded from bytes, as a request parser hands keys over) for the main thread's rows;
  // the workers get them cloned, flat too, and make the built shape themselves.
  const sets = ids.map((id) => keySet(id)).map((set) => ({ ...set, keys: set.keys.map((key) => decoder.decode(encoder.encode(key))) }))
  const speedups: Record<KeyShape, Map<string, StringRow>> = { flat: new Map(), built: new Map() }
  /** Median ns a key of each floor, per key set of a target length. */
  const floors = new Map<string, Record<Floor, number>>()
  const ns = (value: number) => `${value.toFixed(0)} ns`
  const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`
  for (const [step, set] of sets.entries()) {
    report.progress(step, sets.length * 2, `${set.name}: strings, ${isolates} isolates per hasher and shape`)
    // V8 builds strings under 13 chars flat, so the 8-char set has one shape.
    const shapes: KeyShape[] = set.length > 0 && set.length < 13 ? ['flat'] : ['flat', 'built']
    const rows = new Map<KeyShape, StringRow>()
    for (const shape of shapes) {
      const samples = { now: [] as number[], before: [] as number[] }
      const checksums = new Set<number>()
      for (let p = 0; p < isolates; p++) {
        for (const side of p % 2 === 0 ? (['now', 'before'] as const) : (['before', 'now'] as const)) {
          const measured = await measureInIsolate({ side, keys: set.keys, shape, ...workerTimes })
          samples[side].push(measured.nsPerKey)
          checksums.add(measured.checksum)
        }
      }
      if (checksums.size !== 1) throw new Error(`hashing ${set.name} (${shape}): the two hashers disagree (checksums ${[...checksums].join(', ')})`)
      const row = { ...samples, speedup: median(samples.before) / median(samples.now), fastest: Math.min(...samples.before) / Math.min(...samples.now) }
      speedups[shape].set(set.name, row)
      rows.set(shape, row)
    }
    if (TARGET_LENGTHS.includes(set.length)) {
      const samples: Record<Floor, number[]> = { chars: [], encode: [] }
      for (let p = 0; p < isolates; p++) {
        for (const side of p % 2 === 0 ? (['chars', 'encode'] as const) : (['encode', 'chars'] as const)) {
          samples[side].push((await measureInIsolate({ side, keys: set.keys, shape: 'flat', ...workerTimes })).nsPerKey)
        }
      }
      floors.set(set.name, { chars: median(samples.chars), encode: median(samples.encode) })
      for (const floor of Object.keys(FLOORS) as Floor[]) {
        report.add({
          suite: 'hashing',
          task: `${set.name}, floor`,
          subject: `${FLOORS[floor]} (string, ${SHAPES.flat})`,
          batch: 1,
          opsPerSecond: 1e9 / median(samples[floor]),
          notes: `medians of ${isolates} fresh isolates (${range(samples[floor])} ns); KeyHasher now ${ns(median(rows.get('flat')!.now))}, before issue 25 ${ns(median(rows.get('flat')!.before))}`,
        })
      }
    }
    const keys = set.keys
    const viaWasm = await medianOpsPerSecond(`xxhash-wasm ${set.name}`, keys.length, () => {
      let x = 0
      for (let i = 0; i < keys.length; i++) x ^= wasm.h32(keys[i], seedA) ^ wasm.h32(keys[i], seedB)
      return x
    }, time)
    const viaCoreWasm = await medianOpsPerSecond(`core wasm ${set.name}`, keys.length, () => {
      let x = 0
      for (let i = 0; i < keys.length; i++) {
        withWasm.hash(keys[i])
        x ^= withWasm.pair[0] ^ withWasm.pair[1]
      }
      return x
    }, time)
    for (const [shape, row] of rows) {
      const wasmNotes = shape === 'flat'
        ? `; in the main thread, flat keys: with core's wasm (${set.length === 0 || set.length >= WASM_MIN_STRING_LENGTH ? 'used from' : 'unused below'} ${WASM_MIN_STRING_LENGTH} chars) ${ns(1e9 / viaCoreWasm)}, two xxhash-wasm h32 ${ns(1e9 / viaWasm)}`
        : ''
      report.add({
        suite: 'hashing',
        task: `${set.name}, both lanes`,
        subject: `bloomkit KeyHasher (string, ${SHAPES[shape]}${shapes.length === 1 ? '; built ones are flat too under 13 chars' : ''})`,
        batch: 1,
        opsPerSecond: 1e9 / median(row.now),
        notes: `${row.speedup.toFixed(2)}× before issue 25 (${ns(median(row.before))}; fastest isolates ${row.fastest.toFixed(2)}×); medians of ${isolates} fresh isolates a hasher (now ${range(row.now)} ns, before ${range(row.before)} ns)${wasmNotes}`,
      })
    }
  }
  for (const [step, set] of sets.entries()) {
    report.progress(sets.length + step, sets.length * 2, `${set.name}: bytes`)
    const bytes = set.keys.map((s) => encoder.encode(s))
    const jsBytes = await medianOpsPerSecond(`KeyHasher bytes ${set.name}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < bytes.length; i++) {
        hasher.hash(bytes[i])
        x ^= hasher.pair[0] ^ hasher.pair[1]
      }
      return x
    }, time)
    const coreWasmBytes = await medianOpsPerSecond(`core wasm bytes ${set.name}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < bytes.length; i++) {
        withWasm.hash(bytes[i])
        x ^= withWasm.pair[0] ^ withWasm.pair[1]
      }
      return x
    }, time)
    const wasmBytes = await medianOpsPerSecond(`xxhash-wasm bytes ${set.name}`, KEYS, () => {
      let x = 0
      for (let i = 0; i < bytes.length; i++) x ^= wasm.h32Raw(bytes[i], seedA) ^ wasm.h32Raw(bytes[i], seedB)
      return x
    }, time)
    report.add({
      suite: 'hashing',
      task: `${set.name}, both lanes`,
      subject: 'bloomkit KeyHasher (Uint8Array)',
      batch: 1,
      opsPerSecond: jsBytes,
      notes: `in the main thread; with core's wasm: ${(1e9 / coreWasmBytes).toFixed(0)} ns; two xxhash-wasm h32Raw: ${(1e9 / wasmBytes).toFixed(0)} ns`,
    })
  }
  await runBatchRows(report, { sets: sets.filter((set) => set.length === 0), isolates, workerTimes, shapes: SHAPES, measure: measureInIsolate })
  const verdict = (shape: KeyShape) => {
    const all = [...speedups[shape]].map(([name, row]) => [name, row.speedup] as const)
    const targeted = all.filter(([name]) => TARGET_LENGTHS.some((length) => name === `${length}-char key`))
    const slowest = all.reduce((a, b) => (b[1] < a[1] ? b : a))
    const weakest = targeted.reduce((a, b) => (b[1] < a[1] ? b : a))
    return `${SHAPES[shape]}: ${targeted.map(([name, r]) => `${name} ${r.toFixed(2)}×`).join(', ')}, lowest ${weakest[1].toFixed(2)}× ${weakest[1] >= TARGET_SPEEDUP ? 'met' : 'MISSED'}; every key set lowest ${slowest[1].toFixed(2)}× (${slowest[0]}) ${slowest[1] >= 1 ? 'met' : 'MISSED'} (fastest isolates: ${TARGET_LENGTHS.map((length) => `${length} chars ${speedups[shape].get(`${length}-char key`)?.fastest.toFixed(2)}×`).join(', ')})`
  }
  const reachable = TARGET_LENGTHS.map((length) => {
    const name = `${length}-char key`
    const row = speedups.flat.get(name)
    const floor = floors.get(name)
    if (row === undefined || floor === undefined) return undefined
    const needed = median(row.before) / TARGET_SPEEDUP
    const verdict = Math.min(floor.chars, floor.encode) > needed
      ? 'below both floors'
      : floor.encode < needed ? `leaves ${ns(needed - floor.encode)} to hash the encoded bytes` : `leaves ${ns(needed - floor.chars)} for the hash's arithmetic`
    return `${length} chars: 2× needs ≤ ${ns(needed)} a key; reading the char codes alone takes ${ns(floor.chars)}, encodeInto alone ${ns(floor.encode)} (${verdict})`
  }).filter((text) => text !== undefined)
  report.add({
    suite: 'hashing',
    task: 'target: string keys vs before issue 25',
    subject: 'KeyHasher now / before',
    batch: 1,
    opsPerSecond: 0,
    notes: `16–64 chars ≥ ${TARGET_SPEEDUP}×, none slower. ${verdict('flat')}. ${verdict('built')}. Each ratio: the median over ${isolates} fresh isolates (worker threads) of the old pass's ns a key / the median over ${isolates} of today's (one hasher, one key set, one shape an isolate); fastest isolates: the fastest before / the fastest now${reachable.length > 0 ? `. Floors, flat keys (medians of ${isolates} fresh isolates): ${reachable.join('; ')}` : ''}`,
  })
}
