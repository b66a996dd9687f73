/**
 * What a `MemoryBloomFilter` (and the snapshot reader, on its export) does with a fixed corpus, as plain JSON, so that runs in different
 * runtimes (Node with WebAssembly, `node --jitless`, Chromium, a page whose CSP forbids
 * WebAssembly) can be compared value for value. Every runtime computes its own fingerprint with
 * the same code; nothing is copied by hand.
 */
import { createKeyHasher } from '@bloomkit/core/store'
import { sizeFilter, type BloomKey, type SizingOptions } from '@bloomkit/core'
import { WASM_MIN_STRING_LENGTH } from '@bloomkit/core/spec'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { openSnapshot } from '@bloomkit/memory-backend/reader'

/**
 * The filters every runtime builds: one shard and seed 0, many shards with a non-zero seed, and one
 * of over 1 MiB, whose bits live in a WebAssembly.Memory where there is one (plain bytes under
 * `--jitless`), so that both kinds of storage must give the same answers and snapshot.
 */
export const FILTER_OPTIONS: readonly SizingOptions[] = [
  { capacity: 1_000, errorRate: 0.01, seed: 0 },
  { capacity: 1_000, errorRate: 0.001, shards: 16, seed: 0xdeadbeef },
  { capacity: 900_000, errorRate: 0.01, seed: 0x5eed },
]

/** The fingerprint of one filter; bit strings hold one '0' or '1' per key, in corpus order. */
export interface FilterFingerprint {
  options: SizingOptions
  /** XXH32 of each member key with the filter's two lane seeds: `[a0, b0, a1, b1, ...]`. */
  hashPairs: number[]
  /** `add()` (first half of the members) then `addMany()` (second half): was each key new? */
  added: string
  /** `addMany()` of all members again: must all be '0'. */
  addedAgain: string
  /** `has()` of each member: must all be '1' (no false negatives). */
  members: string
  /** `has()` of each non-member probe ('1' = false positive). */
  probes: string
  /** `hasMany()` of the same probes: must equal `probes`. */
  probesMany: string
  estimateCount: number
  /** `export()`, hex. */
  snapshot: string
  /** The snapshot reader's `hasMany()` of the members then the probes: must be `members + probes`. */
  reader: string
}

/** What one runtime did. */
export interface Fingerprint {
  /** Whether WebAssembly served the long keys here (false where WebAssembly is unavailable). */
  usesWasm: boolean
  filters: FilterFingerprint[]
}

/** mulberry32: the same stream in every JavaScript engine (32-bit integer ops only). */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return (t ^ (t >>> 14)) >>> 0
  }
}

function asciiKey(length: number, seed: number): string {
  const next = random(seed)
  let key = ''
  for (let i = 0; i < length; i++) key += String.fromCharCode(0x20 + (next() % 95))
  return key
}

function bytesKey(length: number, seed: number): Uint8Array {
  const next = random(seed)
  return Uint8Array.from({ length }, () => next() & 0xff)
}

/** Lengths either side of the pure-JS / WebAssembly split, and far above it. */
const LONG_LENGTHS = [WASM_MIN_STRING_LENGTH - 1, WASM_MIN_STRING_LENGTH, WASM_MIN_STRING_LENGTH + 1, 200, 1_000, 4_096]

/** Keys that are added: ASCII, unicode (astral, lone surrogates), empty, long, binary (incl. offset views). */
export function memberKeys(): BloomKey[] {
  const keys: BloomKey[] = []
  for (let i = 0; i < 300; i++) keys.push(`user:${i}`)
  keys.push('', 'é', 'café', 'naïve', '日本語', 'Ελληνικά', '😀', 'a😀b', '\u{10FFFF}', '\u0000', 'tab\tnew\nline')
  // Lone surrogates are encoded as U+FFFD by every path (core's encodeUtf8, TextEncoder before WebAssembly).
  keys.push('\ud800', '\udfff', 'x\ud83d', '\ude00y', '\ud83d\ud83d', '\ufffd')
  for (const length of LONG_LENGTHS) keys.push(asciiKey(length, length))
  // Non-ASCII keys whose UTF-16 length sits either side of the split, and long ones.
  keys.push('ü'.repeat(64), 'ü'.repeat(WASM_MIN_STRING_LENGTH), '😀'.repeat(64), '日'.repeat(300), `${'a'.repeat(200)}\ud800`, `\udc00${asciiKey(300, 7)}`)
  keys.push(new Uint8Array(0), Uint8Array.of(0), Uint8Array.from({ length: 256 }, (_, i) => i))
  for (const length of [15, 16, 17, ...LONG_LENGTHS]) keys.push(bytesKey(length, 1_000 + length))
  const buffer = bytesKey(1_024, 99)
  keys.push(buffer.subarray(3, 3 + 140), buffer.subarray(5, 25))
  return keys
}

/** Keys that are never added: short ASCII, and one-character/one-byte variants of the long members. */
export function probeKeys(): BloomKey[] {
  const keys: BloomKey[] = []
  for (let i = 300; i < 2_300; i++) keys.push(`user:${i}`)
  for (const length of LONG_LENGTHS) keys.push(`${asciiKey(length - 1, length)}~`, asciiKey(length, length + 1))
  for (const length of LONG_LENGTHS) {
    const key = bytesKey(length, 1_000 + length)
    key[length >> 1] ^= 1
    keys.push(key)
  }
  keys.push('ü'.repeat(WASM_MIN_STRING_LENGTH + 1), '日'.repeat(301))
  return keys
}

const bits = (answers: readonly boolean[]): string => answers.map((answer) => (answer ? '1' : '0')).join('')

const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')

/** Decodes {@link FilterFingerprint.snapshot}. */
export function fromHex(text: string): Uint8Array {
  return Uint8Array.from({ length: text.length / 2 }, (_, i) => Number.parseInt(text.slice(2 * i, 2 * i + 2), 16))
}

async function fingerprintFilter(options: SizingOptions): Promise<FilterFingerprint> {
  const members = memberKeys()
  const probes = probeKeys()
  const { seed } = sizeFilter(options)
  const hasher = await createKeyHasher(seed)
  const hashPairs: number[] = []
  for (const key of members) {
    hasher.hash(key)
    hashPairs.push(hasher.a, hasher.b)
  }
  const filter = await MemoryBloomFilter.create(options)
  const half = members.length >> 1
  const added = [...members.slice(0, half).map((key) => filter.add(key)), ...filter.addMany(members.slice(half))]
  return {
    options,
    hashPairs,
    added: bits(added),
    addedAgain: bits(filter.addMany(members)),
    members: bits(members.map((key) => filter.has(key))),
    probes: bits(probes.map((key) => filter.has(key))),
    probesMany: bits(filter.hasMany(probes)),
    estimateCount: filter.estimateCount(),
    snapshot: hex(filter.export()),
    reader: bits(openSnapshot(filter.export()).hasMany([...members, ...probes])),
  }
}

/** Builds every filter of {@link FILTER_OPTIONS} over the corpus and records what it answered. */
export async function fingerprint(): Promise<Fingerprint> {
  const filters: FilterFingerprint[] = []
  for (const options of FILTER_OPTIONS) filters.push(await fingerprintFilter(options))
  return { usesWasm: (await createKeyHasher(0)).usesWasm, filters }
}

/**
 * What must hold within one runtime, whatever the hash: no false negatives, nothing new on a
 * second add, `has` and `hasMany` agreeing, and a false-positive rate far from degenerate.
 * Returns the broken rules (empty when all hold).
 */
export function violations({ filters }: Fingerprint): string[] {
  const broken: string[] = []
  for (const filter of filters) {
    const name = JSON.stringify(filter.options)
    if (filter.members.includes('0')) broken.push(`${name}: a member is missing`)
    if (filter.addedAgain.includes('1')) broken.push(`${name}: a second add reported a new key`)
    if (filter.probesMany !== filter.probes) broken.push(`${name}: hasMany and has disagree`)
    if (filter.reader !== filter.members + filter.probes) broken.push(`${name}: the snapshot reader and the filter disagree`)
    const falsePositives = filter.probes.split('1').length - 1
    if (falsePositives > filter.probes.length / 10) broken.push(`${name}: ${falsePositives} of ${filter.probes.length} probes are false positives`)
  }
  return broken
}
