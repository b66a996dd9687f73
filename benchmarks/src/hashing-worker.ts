// One measurement of the hashing suite, alone in a worker thread: one hasher (today's KeyHasher or
// the pass before issue 25) over one key set in one shape, or one of the floors under any string
// hash (reading the key's char codes, or encoding it with TextEncoder.encodeInto). A worker has its
// own V8 isolate, so each measurement starts from fresh JIT state: in a shared one V8's code for a
// hasher depended on what ran before it (see benchmarks/README.md, "String hashing, 16–64 chars").
// A worker starts in about half the time of a child process. Posts back the median ns a key.
import { parentPort, workerData } from 'node:worker_threads'
import { KeyHasherBefore } from './hashing-before.js'

/** Keys per timed sample: short enough to sample often, long enough for the CPU clock (≥ ~100 µs). */
const CHUNK = 2500

/**
 * How a key string is laid out in V8, which each `charCodeAt` pays for: `flat` as a string from I/O
 * arrives (one sequential buffer, as decoding bytes gives), `built` as code makes it (a template
 * literal, `+` or `padEnd`: a ConsString from 13 chars on, which the first `charCodeAt` flattens in
 * place and every later one still steps through).
 */
export type KeyShape = 'flat' | 'built'

/**
 * What a worker times: today's KeyHasher, the pass before issue 25, or a floor: `chars` reads every
 * char code of the key and folds them into a number (the least a JavaScript hash of a string must do),
 * `encode` only encodes it by TextEncoder.encodeInto into a reused buffer (the native route's fixed
 * cost, before any hashing). `loop` and `many` (issue 36) use the hasher a filter gets
 * (createKeyHasher: WebAssembly where the runtime allows it): `loop` calls hash() key by key, `many`
 * hashes batches of {@link MANY_BATCH} keys with hashMany().
 */
export type HashingSide = 'now' | 'before' | 'chars' | 'encode' | 'loop' | 'many'

export interface HashingJob {
  readonly side: HashingSide
  /** The key set; structured cloning hands them over as flat strings. */
  readonly keys: string[]
  readonly shape: KeyShape
  readonly warmupMs: number
  readonly measureMs: number
}

export interface HashingMeasurement {
  readonly nsPerKey: number
  /** XOR of both lanes over the set: the same for both hashers, or one of them hashed something else (a floor's own fold for a floor). */
  readonly checksum: number
  readonly samples: number
}

// KeyHasher's own module (and the few it imports), not the whole `store` entry, nor tinybench through
// measure.js: every worker loads its modules afresh, and loading is most of a worker's time.
const { KeyHasher, createKeyHasher } = (await import(new URL('../hashing/key-hasher.js', import.meta.resolve('@bloomkit/core/store')).href)) as typeof import('@bloomkit/core/store')
const job = workerData as HashingJob
// Built keys are remade from two halves by a template literal: once hashed (flattened in place) a
// ConsString is a wrapper over a flat copy whatever tree it was built as, and that is what is timed.
const keys = job.shape === 'flat' ? job.keys : job.keys.map((key) => `${key.slice(0, key.length >> 1)}${key.slice(key.length >> 1)}`)
const now = new KeyHasher(0)
const before = new KeyHasherBefore(now.seedA, now.seedB)
/** Keys per hashMany call of the `many` side: what services send in one hasMany. */
const MANY_BATCH = 1000
const real = job.side === 'loop' || job.side === 'many' ? await createKeyHasher(0) : now
const manyPairs = new Int32Array(2 * MANY_BATCH)
/**
 * Every char code of `s`, XOR-folded 4 at a time into a word: the reads of a JavaScript string hash
 * with none of its arithmetic. Of the read loops tried (one char a step, 4, 16 as the hash's stripe
 * loop) 4 a step was the cheapest (benchmarks/README.md, "String hashing, 16–64 chars").
 */
function readChars(s: string): number {
  const length = s.length
  let x = 0
  let i = 0
  for (; i + 4 <= length; i += 4) x ^= s.charCodeAt(i) | (s.charCodeAt(i + 1) << 8) | (s.charCodeAt(i + 2) << 16) | (s.charCodeAt(i + 3) << 24)
  for (; i < length; i++) x ^= s.charCodeAt(i)
  return x
}
const encoder = new TextEncoder()
const scratch = new Uint8Array(4096)
// One loop per side, so each loop's feedback knows one class.
const passes: Record<HashingSide, (from: number, to: number) => number> = {
  now: (from, to) => {
    let x = 0
    for (let i = from; i < to; i++) {
      now.hash(keys[i])
      x ^= now.pair[0] ^ now.pair[1]
    }
    return x
  },
  before: (from, to) => {
    let x = 0
    for (let i = from; i < to; i++) {
      before.hash(keys[i])
      x ^= before.pair[0] ^ before.pair[1]
    }
    return x
  },
  chars: (from, to) => {
    let x = 0
    for (let i = from; i < to; i++) x ^= readChars(keys[i])
    return x
  },
  loop: (from, to) => {
    let x = 0
    for (let i = from; i < to; i++) {
      real.hash(keys[i])
      x ^= real.pair[0] ^ real.pair[1]
    }
    return x
  },
  many: (from, to) => {
    let x = 0
    for (let batch = from; batch < to; batch += MANY_BATCH) {
      const count = Math.min(MANY_BATCH, to - batch)
      real.hashMany(keys, batch, count, manyPairs)
      for (let i = 0; i < 2 * count; i++) x ^= manyPairs[i]
    }
    return x
  },
  encode: (from, to) => {
    let x = 0
    for (let i = from; i < to; i++) x ^= encoder.encodeInto(keys[i], scratch).written
    return x
  },
}
const pass = passes[job.side]

/** CPU time this process has used, in ms: the worker thread, as the main thread waits for it. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

// The first pass also flattens built keys in place, as their first hash does in a real process.
const checksum = pass(0, keys.length)
let sink = 0
// Warm-up and samples count CPU time, not wall time: on a shared machine a wall-clock sample holds
// whatever time the scheduler gave other processes, CPU time only this one's work.
for (let start = cpuMs(), passes = 1; passes < 3 || cpuMs() - start < job.warmupMs; passes++) sink ^= pass(0, keys.length)
const nsPerKey: number[] = []
for (let start = cpuMs(), chunk = 0; nsPerKey.length < 12 || cpuMs() - start < job.measureMs; chunk = (chunk + 1) % (keys.length / CHUNK)) {
  const t0 = cpuMs()
  sink ^= pass(chunk * CHUNK, (chunk + 1) * CHUNK)
  nsPerKey.push(((cpuMs() - t0) * 1e6) / CHUNK)
}
if (sink === 0.5) console.log('unreachable: keeps the passes observable')
nsPerKey.sort((a, b) => a - b)
const measurement: HashingMeasurement = { nsPerKey: nsPerKey[nsPerKey.length >> 1], checksum, samples: nsPerKey.length }
parentPort!.postMessage(measurement)
