// A reader and writer of bloomkit filters in Redis written from docs/SPEC.md alone (sections 1–5,
// 8 and 9), as another language's service would: it imports nothing from bloomkit, only ioredis
// to talk to the server, and computes hashes, shards, positions, tags, checks and markers itself.
// The tests share fixed and layered filters between it and the library in both directions.
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'

// ---- Section 2: XXH32 -------------------------------------------------------------------------

const P1 = 0x9e3779b1
const P2 = 0x85ebca77
const P3 = 0xc2b2ae3d
const P4 = 0x27d4eb2f
const P5 = 0x165667b1
const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0
const mul = (a: number, b: number) => Math.imul(a, b) >>> 0
const u32le = (b: Uint8Array, i: number) => (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0

export function xxh32(input: Uint8Array, seed: number): number {
  const len = input.length
  let i = 0
  let acc: number
  if (len >= 16) {
    let v1 = (seed + P1 + P2) >>> 0
    let v2 = (seed + P2) >>> 0
    let v3 = seed >>> 0
    let v4 = (seed - P1) >>> 0
    for (; i + 16 <= len; i += 16) {
      v1 = mul(rotl((v1 + mul(u32le(input, i), P2)) >>> 0, 13), P1)
      v2 = mul(rotl((v2 + mul(u32le(input, i + 4), P2)) >>> 0, 13), P1)
      v3 = mul(rotl((v3 + mul(u32le(input, i + 8), P2)) >>> 0, 13), P1)
      v4 = mul(rotl((v4 + mul(u32le(input, i + 12), P2)) >>> 0, 13), P1)
    }
    acc = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) >>> 0
  } else {
    acc = (seed + P5) >>> 0
  }
  acc = (acc + len) >>> 0
  for (; i + 4 <= len; i += 4) acc = mul(rotl((acc + mul(u32le(input, i), P3)) >>> 0, 17), P4)
  for (; i < len; i++) acc = mul(rotl((acc + mul(input[i], P5)) >>> 0, 11), P1)
  acc ^= acc >>> 15
  acc = mul(acc, P2)
  acc ^= acc >>> 13
  acc = mul(acc, P3)
  acc ^= acc >>> 16
  return acc >>> 0
}

// ---- Sections 2–4: a key's shard and positions --------------------------------------------------

export interface Parameters {
  bits: number
  hashes: number
  shards: number
  seed: number
  scheme: 1 | 2 | 3
}

function fmix32(h: number): number {
  h ^= h >>> 16
  h = mul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = mul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

const encoder = new TextEncoder()

/** The hash pair of a key (section 2). */
export function pairOf(key: string, seed: number): [number, number] {
  const bytes = encoder.encode(key)
  return [xxh32(bytes, seed), xxh32(bytes, (seed ^ 0x9e3779b9) >>> 0)]
}

/** Shard and positions of a key's pair in a filter (sections 3–4). */
export function locate(p: Parameters, [a, b]: [number, number]): { shard: number; positions: number[] } {
  const shard = p.shards === 1 ? 0 : Math.floor((fmix32((a ^ rotl(b, 16)) >>> 0) * p.shards) / 2 ** 32)
  const shardBits = p.bits / p.shards
  const positions: number[] = []
  if (p.scheme === 1 || p.scheme === 3) {
    let x = a
    let y = b
    for (let i = 0; i < p.hashes; i++) {
      // Section 4.3: scheme 3 remixes each value of scheme 1's sequence by fmix32 before scaling.
      const h = p.scheme === 3 ? fmix32(x) : x
      positions.push(Number((BigInt(h) * BigInt(shardBits)) >> 32n))
      x = (x + y) >>> 0
      y = (y + i + 1) >>> 0
    }
  } else {
    const start = Number((BigInt(a) * BigInt(shardBits / 512)) >> 32n) * 512
    let h = b
    for (let i = 0; i < p.hashes; i++) {
      positions.push(start + (h >>> 23))
      h = mul(h, 0x9e3779b9)
    }
  }
  return { shard, positions }
}

// ---- Section 6: CRC-32; section 9.1: CRC16, slots and tags ---------------------------------------

const CRC32_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const byte of bytes) c = CRC32_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

export function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let k = 0; k < 8; k++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}

export const slot = (text: string) => crc16(encoder.encode(text)) % 16384

let tagTable: string[] | undefined
/** For every slot, the first base-36 number whose slot it is. */
export function tags(): string[] {
  if (tagTable === undefined) {
    const table = new Array<string>(16384)
    let found = 0
    for (let i = 0; found < 16384; i++) {
      const text = i.toString(36)
      const s = slot(text)
      if (table[s] === undefined) {
        table[s] = text
        found++
      }
    }
    tagTable = table
  }
  return tagTable
}

function tagOf(name: string, shards: number, s: number): string {
  return tags()[(slot(name) + Math.floor((s * 16384) / shards)) % 16384]
}

export function shardKeys(name: string, shards: number, kind = ''): string[] {
  return Array.from({ length: shards }, (_, s) => `${name}:${s}:${kind}{${tagOf(name, shards, s)}}`)
}

// ---- Section 9.2–9.3: markers and the meta hash ----------------------------------------------------

export function marker(epoch: number, flagged: boolean): Uint8Array {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, 2 * epoch + (flagged ? 1 : 0))
  return out
}

const CHECKED = ['format', 'scheme', 'seed', 'bits', 'hashes', 'shards', 'epoch'] as const

export function metaCheck(fields: Readonly<Partial<Record<string, string>>>): string {
  return crc32(encoder.encode(CHECKED.map((f) => fields[f] ?? '').join('|'))).toString(16).padStart(8, '0')
}

/** An error with the code a bloomkit reader would give (the spec's table in 9.9). */
export class SpecError extends Error {
  constructor(readonly code: string, message: string) {
    super(`${code}: ${message}`)
  }
}

// ---- Section 9's conventions: numbers exactly as a writer writes them --------------------------------

/** An integer field: decimal digits, no sign, no leading zeros (`0` itself), at most 2^53 − 1; else BLOOM_CORRUPT_STORE. */
export function integerField(f: Readonly<Partial<Record<string, string>>>, field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const text = f[field]
  const value = Number(text)
  if (text === undefined || !/^(0|[1-9][0-9]*)$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new SpecError('BLOOM_CORRUPT_STORE', `${field} ${JSON.stringify(text)}`)
  }
  return value
}

/** A binary64 field: the shortest text that reads back to it (ECMAScript Number#toString); else BLOOM_CORRUPT_STORE. */
function doubleField(f: Readonly<Partial<Record<string, string>>>, field: string): number {
  const text = f[field]
  const value = Number(text)
  if (text === undefined || text === '' || !Number.isFinite(value) || String(value) !== text) throw new SpecError('BLOOM_CORRUPT_STORE', `${field} ${JSON.stringify(text)}`)
  return value
}

// ---- Section 9.4–9.5: a fixed filter ----------------------------------------------------------------

export interface Fixed {
  readonly name: string
  readonly p: Parameters
  readonly epoch: number
  readonly live: string[]
  readonly next: string[]
  readonly B: number
  /** 9.12: the feeds' trim bound in format 2; 0 in format 1 (no feeds). */
  readonly feedLength: number
  readonly feeds: string[]
}

const DISCARD = `local m = redis.call('GETRANGE', KEYS[1], ARGV[1], ARGV[1] + 3)
if m ~= ARGV[2] and m ~= ARGV[3] and redis.call('STRLEN', KEYS[1]) < ARGV[1] + 4 then return redis.call('DEL', KEYS[1]) end return 0`

export async function openFixed(redis: Redis, name: string, waitMs = 5000): Promise<Fixed> {
  const f = await redis.hgetall(`${name}:meta`)
  // Open step 5: a filter being created or imported is waited for, then BLOOM_LOCKED.
  if ((f.state === 'creating' || f.state === 'importing') && waitMs > 0) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    return openFixed(redis, name, waitMs - 50)
  }
  if (Object.keys(f).length === 0) throw new SpecError('BLOOM_NOT_FOUND', name)
  // Open step 2: what the hash is.
  if (f.format === undefined) throw new SpecError('BLOOM_CORRUPT_STORE', 'no format')
  if (f.kind === 'layered') throw new SpecError('BLOOM_INCOMPATIBLE', 'layered')
  // 9.12: format 2 is format 1 with feeds, for plain filters only.
  if ((f.format !== '1' && f.format !== '2') || (f.format === '2' && f.kind === 'counting')) throw new SpecError('BLOOM_UNSUPPORTED_VERSION', `format ${f.format}`)
  if (f.kind !== undefined && f.kind !== 'counting') throw new SpecError('BLOOM_UNSUPPORTED_VERSION', `kind ${f.kind}`)
  // Step 3: the check; step 4: every number canonical, then the scheme known, then the values possible.
  if (f.check !== undefined && f.check !== metaCheck(f)) throw new SpecError('BLOOM_CORRUPT_STORE', 'check')
  const [scheme, seed, bits, hashes, shards, epoch] = ['scheme', 'seed', 'bits', 'hashes', 'shards', 'epoch'].map((field) => integerField(f, field))
  integerField(f, 'generation', 1)
  if (scheme < 1 || scheme > 3) throw new SpecError('BLOOM_UNSUPPORTED_VERSION', `scheme ${scheme}`)
  const p: Parameters = { bits, hashes, shards, seed, scheme: scheme as 1 | 2 | 3 }
  const shardBits = p.bits / p.shards
  if (p.shards < 1 || p.shards > 65_536 || seed > 2 ** 32 - 1 || !Number.isInteger(shardBits) || shardBits % (p.scheme === 2 ? 512 : 8) !== 0 || shardBits > 2 ** 32 - 32 || p.hashes < 1 || p.hashes > 64 || shardBits < Math.max(8, p.hashes)) {
    throw new SpecError('BLOOM_CORRUPT_STORE', 'parameters')
  }
  if (epoch < 1 || epoch > 2 ** 31 - 1) throw new SpecError('BLOOM_CORRUPT_STORE', 'epoch')
  const feedLength = f.format === '2' ? integerField(f, 'feedLength', 1, 2 ** 31 - 1) : 0
  if (!['creating', 'importing', 'rebuilding', 'replacing', 'clearing', 'ready'].includes(f.state)) throw new SpecError('BLOOM_CORRUPT_STORE', 'state')
  if (f.state === 'creating' || f.state === 'importing') throw new SpecError('BLOOM_LOCKED', f.state)
  // 9.11: this reader opens plain filters; a counting one's shards hold counters.
  if (f.kind === 'counting') throw new SpecError('BLOOM_INCOMPATIBLE', 'counting')
  const filter: Fixed = { name, p, epoch, live: shardKeys(name, p.shards), next: shardKeys(name, p.shards, 'next:'), B: shardBits / 8, feedLength, feeds: shardKeys(name, p.shards, 'feed:') }
  // Open step 6: shard 0's marker where the meta puts it, else its last 4 bytes.
  const [length, at, last] = await Promise.all([redis.strlen(filter.live[0]), redis.getrangeBuffer(filter.live[0], filter.B, filter.B + 3), redis.getrangeBuffer(filter.live[0], -4, -1)])
  if (length > 0 && !accepted(filter, at, true)) {
    throw new SpecError(accepted(filter, last, true) ? 'BLOOM_CORRUPT_STORE' : 'BLOOM_DATA_LOST', 'shard 0')
  }
  return filter
}

function accepted(filter: Fixed, bytes: Uint8Array, flaggedToo: boolean): boolean {
  const same = (m: Uint8Array) => bytes.length === 4 && bytes.every((b, i) => b === m[i])
  return same(marker(filter.epoch, false)) || (flaggedToo && same(marker(filter.epoch, true)))
}

function acceptedNumber(filter: Fixed, value: number, flaggedToo: boolean): boolean {
  return value === 2 * filter.epoch || (flaggedToo && value === 2 * filter.epoch + 1)
}

/** The meta's checked fields against those opened with (9.4), beside each batch. */
async function verifyMeta(redis: Redis, filter: Fixed): Promise<void> {
  const stored = await redis.hmget(`${filter.name}:meta`, ...CHECKED)
  const expected = [filter.feedLength > 0 ? '2' : '1', String(filter.p.scheme), String(filter.p.seed), String(filter.p.bits), String(filter.p.hashes), String(filter.p.shards), String(filter.epoch)]
  if (stored.every((v, i) => v === expected[i])) return
  if (stored.every((v) => v === null) || stored[6] !== expected[6]) throw new SpecError('BLOOM_DATA_LOST', 'meta gone or re-created')
  throw new SpecError('BLOOM_CORRUPT_STORE', 'meta changed')
}

/** Groups keys by shard: shard → [key index, positions, hash pair]. */
function group(filter: Fixed, keys: string[]): Map<number, Array<[number, number[], [number, number]]>> {
  const groups = new Map<number, Array<[number, number[], [number, number]]>>()
  keys.forEach((key, i) => {
    const pair = pairOf(key, filter.p.seed)
    const { shard, positions } = locate(filter.p, pair)
    if (!groups.has(shard)) groups.set(shard, [])
    groups.get(shard)!.push([i, positions, pair])
  })
  return groups
}

export async function hasFixed(redis: Redis, filter: Fixed, keys: string[]): Promise<boolean[]> {
  const out = new Array<boolean>(keys.length).fill(false)
  const probes = [...group(filter, keys)].map(async ([shard, members]) => {
    const args = members.flatMap(([, positions]) => positions.flatMap((p) => ['GET', 'u1', p]))
    const reply = (await redis.call('BITFIELD_RO', filter.live[shard], 'GET', 'u32', 8 * filter.B, ...args)) as number[]
    if (!acceptedNumber(filter, Number(reply[0]), true)) throw new SpecError('BLOOM_DATA_LOST', filter.live[shard])
    let r = 1
    for (const [i, positions] of members) {
      let all = true
      for (let h = 0; h < positions.length; h++) if (Number(reply[r++]) !== 1) all = false
      out[i] = all
    }
  })
  const settled = await Promise.allSettled([verifyMeta(redis, filter), ...probes])
  for (const s of settled) if (s.status === 'rejected') throw s.reason
  return out
}

/**
 * BITFIELD SET of members' bits with the marker read first; returns the marker and each key's "new".
 * `feed`: a live shard's feed (9.12), which gets the members' entry in the same MULTI/EXEC.
 */
async function setBits(redis: Redis, key: string, filter: Fixed, members: Array<[number, number[], [number, number]]>, feed?: string): Promise<{ marker: number; fresh: boolean[] }> {
  const args = members.flatMap(([, positions]) => positions.flatMap((p) => ['SET', 'u1', p, 1]))
  let reply: number[]
  if (feed === undefined) {
    reply = (await redis.call('BITFIELD', key, 'GET', 'u32', 8 * filter.B, ...args)) as number[]
  } else {
    const value = entryValue(randomBytes(8), members.map(([, , pair]) => pair))
    const replies = await redis.multi().call('BITFIELD', key, 'GET', 'u32', 8 * filter.B, ...args).call('XADD', feed, 'NOMKSTREAM', 'MAXLEN', '~', filter.feedLength, '*', 'h', value).exec()
    if (replies === null) throw new SpecError('BLOOM_STORE_UNAVAILABLE', 'aborted')
    for (const [error] of replies) if (error) throw new SpecError(/WRONGTYPE/.test(error.message) ? 'BLOOM_CORRUPT_STORE' : 'BLOOM_STORE_UNAVAILABLE', error.message)
    reply = replies[0][1] as number[]
  }
  let r = 1
  return { marker: Number(reply[0]), fresh: members.map(([, positions]) => positions.map(() => Number(reply[r++])).some((old) => old === 0)) }
}

export async function addFixed(redis: Redis, filter: Fixed, keys: string[]): Promise<boolean[]> {
  const out = new Array<boolean>(keys.length).fill(false)
  const plain = Buffer.from(marker(filter.epoch, false))
  const flagged = Buffer.from(marker(filter.epoch, true))
  const writes = [...group(filter, keys)].map(async ([shard, members]) => {
    // 9.12: in format 2 each live write appends its entry in the same step.
    const feed = filter.feedLength > 0 ? filter.feeds[shard] : undefined
    const { marker: m, fresh } = await setBits(redis, filter.live[shard], filter, members, feed)
    if (!acceptedNumber(filter, m, true)) {
      await redis.eval(DISCARD, 1, filter.live[shard], filter.B, plain, flagged)
      throw new SpecError('BLOOM_DATA_LOST', filter.live[shard])
    }
    members.forEach(([i], j) => (out[i] = fresh[j]))
    if (m === 2 * filter.epoch + 1) {
      // A rebuild runs: the next generation gets the bits too, before the add is acknowledged.
      const copy = await setBits(redis, filter.next[shard], filter, members)
      if (copy.marker !== 2 * filter.epoch) {
        await redis.eval(DISCARD, 1, filter.next[shard], filter.B, plain, plain)
        const again = await setBits(redis, filter.live[shard], filter, members, feed)
        if (!acceptedNumber(filter, again.marker, true)) throw new SpecError('BLOOM_DATA_LOST', filter.live[shard])
      }
    }
  })
  const settled = await Promise.allSettled([verifyMeta(redis, filter), ...writes])
  for (const s of settled) if (s.status === 'rejected') throw s.reason
  return out
}

const CREATE_META = `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end redis.call('HSET', KEYS[1], unpack(ARGV)) return 1`
// 9.6's swap; with KEYS[3] (9.12) the feed is reset in it and takes the shard's TTL.
const SWAP = `local at = tonumber(ARGV[1])
if redis.call('GETRANGE', KEYS[1], at, at + 3) ~= ARGV[2] then return redis.error_reply('incomplete') end
local ttl = redis.call('PTTL', KEYS[2])
redis.call('RENAME', KEYS[1], KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) elseif tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
if KEYS[3] then
  redis.call('DEL', KEYS[3])
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'r', ARGV[5])
  local left = redis.call('PTTL', KEYS[2])
  if left > 0 then redis.call('PEXPIRE', KEYS[3], left) end
end
return 1`
const UNLOCK = `if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end redis.call('HSET', KEYS[1], 'state', 'ready', 'token', '') return 1`

/**
 * Creates a fixed filter (9.6: meta, then each shard allocated, sealed and swapped in, then
 * unlocked); with `feedLength`, in format 2 (9.12), its feeds reset by the swaps. False if the name was taken.
 */
export async function createFixed(redis: Redis, name: string, p: Parameters, ttlMs = 0, feedLength = 0): Promise<boolean> {
  const epoch = 1 + (randomBytes(4).readUInt32BE() % (2 ** 31 - 1))
  const token = randomBytes(12).toString('hex')
  const fields: Record<string, string> = { format: feedLength > 0 ? '2' : '1', scheme: String(p.scheme), seed: String(p.seed), bits: String(p.bits), hashes: String(p.hashes), shards: String(p.shards), epoch: String(epoch) }
  fields.check = metaCheck(fields)
  Object.assign(fields, { generation: '1', state: 'creating', token, created: String(Date.now()) }, feedLength > 0 ? { feedLength: String(feedLength) } : {})
  if (Number(await redis.eval(CREATE_META, 1, `${name}:meta`, ...Object.entries(fields).flat())) !== 1) return false
  const B = p.bits / p.shards / 8
  const live = shardKeys(name, p.shards)
  const next = shardKeys(name, p.shards, 'next:')
  for (let s = 0; s < p.shards; s++) {
    await redis.del(next[s])
    await redis.setrange(next[s], B + 3, '\0')
    await redis.setrange(next[s], B, Buffer.from(marker(epoch, false)))
    if (feedLength > 0) await redis.eval(SWAP, 3, next[s], live[s], shardKeys(name, p.shards, 'feed:')[s], B, Buffer.from(marker(epoch, false)), ttlMs, feedLength, randomBytes(8))
    else await redis.eval(SWAP, 2, next[s], live[s], B, Buffer.from(marker(epoch, false)), ttlMs)
  }
  if (ttlMs > 0) await redis.pexpire(`${name}:meta`, ttlMs)
  await redis.eval(UNLOCK, 1, `${name}:meta`, token)
  return true
}

// ---- Section 9.12: feeds ---------------------------------------------------------------------------

/** An entry's value: the tag, then each key's a and b as unsigned 32-bit little-endian numbers. */
export function entryValue(tag: Uint8Array, pairs: ReadonlyArray<readonly [number, number]>): Buffer {
  const value = Buffer.alloc(8 + 8 * pairs.length)
  value.set(tag, 0)
  pairs.forEach(([a, b], i) => {
    value.writeUInt32LE(a, 8 + 8 * i)
    value.writeUInt32LE(b, 12 + 8 * i)
  })
  return value
}

export interface FeedEntry {
  readonly id: string
  readonly kind: 'h' | 'r'
  readonly tag: string
  readonly pairs: Array<[number, number]>
}

/** An entry as XRANGE returns it, checked as 9.12 says. */
export function parseEntry(id: string, fields: Buffer[]): FeedEntry {
  if (fields.length !== 2) throw new SpecError('BLOOM_CORRUPT_STORE', `entry ${id}: ${fields.length / 2} fields`)
  const kind = fields[0].toString()
  const value = fields[1]
  if ((kind !== 'h' && kind !== 'r') || value.length < 8 || (kind === 'r' ? value.length !== 8 : (value.length - 8) % 8 !== 0)) throw new SpecError('BLOOM_CORRUPT_STORE', `entry ${id}`)
  const pairs: Array<[number, number]> = []
  for (let at = 8; at < value.length; at += 8) pairs.push([value.readUInt32LE(at), value.readUInt32LE(at + 4)])
  return { id, kind, tag: value.subarray(0, 8).toString('hex'), pairs }
}

/** Shard `shard`'s feed, oldest entry first. */
export async function readFeed(redis: Redis, filter: Fixed, shard: number): Promise<FeedEntry[]> {
  const raw = (await redis.xrangeBuffer(filter.feeds[shard], '-', '+')) as Array<[Buffer, Buffer[]]>
  return raw.map(([id, fields]) => parseEntry(id.toString(), fields))
}

/** What a replica does: the bits of every shard (the order of section 5) after its feed's add entries are applied to `loaded` (empty shards by default). */
export async function replayFeeds(redis: Redis, filter: Fixed, loaded?: Uint8Array[]): Promise<Uint8Array[]> {
  const shards: Uint8Array[] = []
  for (let s = 0; s < filter.p.shards; s++) {
    const bits = loaded === undefined ? new Uint8Array(filter.B) : Uint8Array.from(loaded[s])
    for (const entry of await readFeed(redis, filter, s)) {
      for (const pair of entry.pairs) {
        const { shard, positions } = locate(filter.p, pair)
        if (shard !== s) throw new SpecError('BLOOM_CORRUPT_STORE', `entry ${entry.id}: a key of shard ${shard} in the feed of ${s}`)
        for (const p of positions) bits[p >>> 3] |= 0x80 >>> (p & 7)
      }
    }
    shards.push(bits)
  }
  return shards
}

// ---- Section 9.8: a layered filter ----------------------------------------------------------------

export interface Entry {
  id: number
  window: number
  index: number
  capacity: number
}

/** The `layers` field: entries of four canonical decimals, id and capacity at least 1, no id twice. */
export function parseLayers(text: string): Entry[] {
  if (text === '') return []
  const seen = new Set<number>()
  return text.split(',').map((entry) => {
    const parts = entry.split('/')
    if (parts.length !== 4) throw new SpecError('BLOOM_CORRUPT_STORE', `layers entry ${entry}`)
    const [id, window, index, capacity] = parts.map((part, i) => integerField({ part }, 'part', i === 0 || i === 3 ? 1 : 0))
    if (seen.has(id)) throw new SpecError('BLOOM_CORRUPT_STORE', `layers entry ${entry}: id twice`)
    seen.add(id)
    return { id, window, index, capacity }
  })
}

/** The window of time `now` (9.8); times run from 0 to 2^53 − 1 ms (section 8). */
export function windowOf(seconds: number, now: number): number {
  if (!(now >= 0 && now <= Number.MAX_SAFE_INTEGER)) throw new SpecError('BLOOM_INVALID_PARAMETER', `time ${now}`)
  return Math.floor(now / (seconds * 1000))
}

/**
 * A writer's current window (9.8): the later of its clock's and the newest listed entry's. A clock
 * `keep` or more windows behind it must not add.
 */
function currentWindow(l: Layered, entries: Entry[], now: number): number {
  const w = windowOf(l.seconds, now)
  const current = Math.max(w, ...entries.map((e) => e.window))
  if (w < current - l.keep + 1) throw new SpecError('BLOOM_CLOCK_SKEW', `window ${w}, the filter's ${current}`)
  return current
}

export interface Layered {
  readonly name: string
  readonly policy: string
  readonly capacity: number
  readonly errorRate: number
  readonly growth: number
  readonly tightening: number
  readonly seconds: number
  readonly keep: number
  readonly seed: number
  readonly scheme: number
  readonly shards: number
  /** 9.12: the layers' feed length in format 2; 0 in format 1. */
  readonly feedLength: number
}

const LAYERED_CHECKED = ['format', 'kind', 'policy', 'capacity', 'errorRate', 'growth', 'tightening', 'seconds', 'keep', 'seed', 'scheme', 'shards', 'layers', 'version', 'nextId'] as const

/** A layered meta's `check` (9.8): CRC-32 of the fifteen fields' values joined by `|`, a missing one as ''. */
export function layeredCheck(fields: Readonly<Partial<Record<string, string>>>): string {
  return crc32(encoder.encode(LAYERED_CHECKED.map((f) => fields[f] ?? '').join('|'))).toString(16).padStart(8, '0')
}

/** The list's own fields (9.8): version, nextId at least every listed id, counts, ready marks; windows that start by 2^53 − 1 ms (section 8). */
function checkList(f: Readonly<Partial<Record<string, string>>>): Entry[] {
  const entries = parseLayers(f.layers ?? '')
  const seconds = Number(f.seconds)
  if (f.policy === 'rotating' && entries.some((e) => e.window * seconds * 1000 > Number.MAX_SAFE_INTEGER)) throw new SpecError('BLOOM_CORRUPT_STORE', 'a window past the last')
  integerField(f, 'version', 1)
  const nextId = integerField(f, 'nextId')
  for (const e of entries) {
    if (e.id > nextId) throw new SpecError('BLOOM_CORRUPT_STORE', `nextId ${nextId} below listed id ${e.id}`)
    if (f[`count:${e.id}`] !== undefined) integerField(f, `count:${e.id}`)
    if (f[`ready:${e.id}`] !== undefined && f[`ready:${e.id}`] !== '1') throw new SpecError('BLOOM_CORRUPT_STORE', `ready:${e.id}`)
  }
  return entries
}

export async function openLayered(redis: Redis, name: string): Promise<Layered> {
  const f = await redis.hgetall(`${name}:meta`)
  // Open step 1: the hash; step 2: what it is.
  if (Object.keys(f).length === 0) throw new SpecError('BLOOM_NOT_FOUND', name)
  if (f.format === undefined) throw new SpecError('BLOOM_CORRUPT_STORE', 'no format')
  if (f.kind === undefined || f.kind === 'counting') throw new SpecError('BLOOM_INCOMPATIBLE', 'not layered')
  if (f.kind !== 'layered') throw new SpecError('BLOOM_UNSUPPORTED_VERSION', `kind ${f.kind}`)
  // 9.12: format 2 is format 1 whose layers have feeds.
  if (f.format !== '1' && f.format !== '2') throw new SpecError('BLOOM_UNSUPPORTED_VERSION', `format ${f.format}`)
  // Step 3: the check before anything it covers (a meta without `check` was written before it existed: accepted).
  if (f.check !== undefined && f.check !== layeredCheck(f)) throw new SpecError('BLOOM_CORRUPT_STORE', 'layered check')
  // Step 4: the policy known, every number canonical, the scheme known, the values possible, the list.
  if (f.policy !== 'scalable' && f.policy !== 'rotating') throw new SpecError('BLOOM_UNSUPPORTED_VERSION', `policy ${f.policy}`)
  const [capacity, growth, seconds, keep, seed, scheme, shards] = ['capacity', 'growth', 'seconds', 'keep', 'seed', 'scheme', 'shards'].map((field) => integerField(f, field))
  const [errorRate, tightening] = ['errorRate', 'tightening'].map((field) => doubleField(f, field))
  if (scheme > 3) throw new SpecError('BLOOM_UNSUPPORTED_VERSION', `scheme ${scheme}`)
  const rotating = f.policy === 'rotating'
  const possible =
    capacity >= 1 &&
    errorRate > 0 && errorRate < 1 &&
    tightening > 0 && tightening < 1 &&
    growth >= (rotating ? 0 : 1) && growth <= 65_536 &&
    seed <= 2 ** 32 - 1 &&
    shards <= 65_536 &&
    (rotating ? seconds >= 1 && seconds <= 2 ** 32 - 1 && keep >= 1 && keep <= 65_536 : seconds === 0 && keep === 0)
  if (!possible) throw new SpecError('BLOOM_CORRUPT_STORE', 'policy fields')
  checkList(f)
  // 9.12: a layered meta of format 2 has its layers made with feeds of its feedLength.
  const feedLength = f.format === '2' ? integerField(f, 'feedLength', 1, 2 ** 31 - 1) : 0
  return { name, policy: f.policy, capacity, errorRate, growth, tightening, seconds, keep, seed, scheme, shards, feedLength }
}

function checkedEntries(l: Layered, entries: Entry[], now: number): Entry[] {
  if (l.policy === 'scalable') return entries
  const oldest = windowOf(l.seconds, now) - l.keep + 1
  return entries.filter((e) => e.window >= oldest)
}

/** Opens a listed layer: ready ones must exist; one not ready holds no keys yet (undefined). */
async function openLayer(redis: Redis, l: Layered, entry: Entry): Promise<Fixed | undefined> {
  const ready = await redis.hget(`${l.name}:meta`, `ready:${entry.id}`)
  if (ready !== null && ready !== '1') throw new SpecError('BLOOM_CORRUPT_STORE', `ready:${entry.id}`)
  try {
    return await openFixed(redis, `${l.name}:L${entry.id}`)
  } catch (error) {
    if (error instanceof SpecError && error.code === 'BLOOM_NOT_FOUND') {
      if (ready === '1') throw new SpecError('BLOOM_DATA_LOST', `layer ${entry.id}`)
      return undefined
    }
    throw error
  }
}

/**
 * Layers an add judges keys against (9.8, step 1): rotating, those of the current window (a key only
 * older windows hold is written again, section 8); scalable, while a rebuild runs, the rebuilt
 * layer (index 0, not first) and those after it.
 */
function judgedForAdds(l: Layered, entries: Entry[], now: number): Entry[] {
  if (l.policy !== 'scalable') {
    const current = currentWindow(l, entries, now)
    return entries.filter((e) => e.window >= current)
  }
  for (let i = entries.length - 1; i > 0; i--) if (entries[i].index === 0) return entries.slice(i)
  return entries
}

/** Checks keys against the checked layers, re-reading the version after the probes (9.8). */
export async function hasLayered(redis: Redis, l: Layered, keys: string[], now = Date.now(), adding = false): Promise<boolean[]> {
  return (await probeLayered(redis, l, keys, now, adding)).found
}

const isGone = (error: unknown) => error instanceof SpecError && error.code === 'BLOOM_DATA_LOST'

/**
 * Checking (9.8), and adding step 1 when `adding`: probes the checked (judged) layers, then reads
 * the list again; a moved list sends it to the layers it did not probe. A layer found gone is
 * lost only if the list read again still holds it. An add whose judged layers left the list
 * judges again over the new list alone. Returns the answers and the ids of the layers they rest on.
 */
async function probeLayered(redis: Redis, l: Layered, keys: string[], now: number, adding: boolean): Promise<{ found: boolean[]; judged: number[] }> {
  const meta = `${l.name}:meta`
  const found = new Array<boolean>(keys.length).fill(false)
  let probed = new Set<number>()
  let [layers, version] = await redis.hmget(meta, 'layers', 'version')
  for (;;) {
    if (version === null) throw new SpecError('BLOOM_NOT_FOUND', l.name)
    const checked = checkedEntries(l, parseLayers(layers ?? ''), now)
    const asked = adding ? judgedForAdds(l, checked, now) : checked
    const ids = new Set(asked.map((entry) => entry.id))
    if (adding && [...probed].some((id) => !ids.has(id))) {
      found.fill(false)
      probed = new Set()
    }
    let gone = false
    for (const entry of asked) {
      if (probed.has(entry.id)) continue
      try {
        const layer = await openLayer(redis, l, entry)
        if (layer !== undefined) (await hasFixed(redis, layer, keys)).forEach((held, i) => (found[i] ||= held))
      } catch (error) {
        if (!isGone(error)) throw error
        gone = true
        break
      }
      probed.add(entry.id)
    }
    const [again, againVersion] = await redis.hmget(meta, 'layers', 'version')
    if (againVersion === version) {
      if (gone) throw new SpecError('BLOOM_DATA_LOST', `${l.name}: a listed layer is gone`)
      return { found, judged: [...ids] }
    }
    ;[layers, version] = [again, againVersion]
  }
}

/** The ids of the layers an add judges against now (9.8, adding step 1). */
async function judgedNow(redis: Redis, l: Layered, now: number): Promise<Set<number>> {
  const layers = await redis.hget(`${l.name}:meta`, 'layers')
  return new Set(judgedForAdds(l, checkedEntries(l, parseLayers(layers ?? ''), now), now).map((entry) => entry.id))
}

/**
 * Growing (9.8 step 3), written the other way the spec allows: the new list, next id and check are
 * computed here from the fields read, and the script applies them only if `version` and `check`
 * are still those read (compare-and-set on both), in one step with the drops.
 * KEYS[1] meta; ARGV: version read, check read ('' for none), new layers, new version, new nextId,
 * new check ('' for none), meta TTL ms, then the ids dropped. Returns 1 when applied.
 */
const GROW = `local f = redis.call('HMGET', KEYS[1], 'version', 'check')
if f[1] ~= ARGV[1] or (f[2] or '') ~= ARGV[2] then return 0 end
for i = 8, #ARGV do redis.call('HDEL', KEYS[1], 'count:' .. ARGV[i], 'ready:' .. ARGV[i]) end
redis.call('HSET', KEYS[1], 'layers', ARGV[3], 'version', ARGV[4], 'nextId', ARGV[5])
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'check', ARGV[6]) end
if tonumber(ARGV[7]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[7]) end
return 1`

/**
 * A layer's parameters, sized simply (Guava's formulas, blocked unless the policy says classic,
 * shards as the policy fixes or as keep each under the 9.2 cap): the spec lets a writer size
 * differently from bloomkit, and bloomkit then opens the layer with the parameters it holds.
 */
function sizeLayer(l: Layered, index: number, capacity: number): Parameters {
  const budget = l.policy === 'rotating' ? l.errorRate / l.keep : l.errorRate
  const rate = l.growth === 0 ? budget : budget * (1 - l.tightening) * l.tightening ** index
  const g = Math.ceil((-capacity * Math.log(rate)) / Math.LN2 ** 2 * 1.2)
  const hashes = Math.min(64, Math.max(1, Math.round((g / capacity) * Math.LN2)))
  // Section 8: new classic layers use scheme 3 whether the meta says 1 or 3.
  const scheme = l.scheme === 1 || l.scheme === 3 ? 3 : 2
  const unit = scheme === 3 ? 8 : 512
  const shards = l.shards > 0 ? l.shards : Math.max(1, Math.ceil(g / 33_554_304))
  const shardBits = Math.max(unit, Math.ceil(g / shards / unit) * unit)
  return { bits: shardBits * shards, hashes, shards, seed: l.seed, scheme }
}

/**
 * Lists a new layer by the compare-and-set script and creates its filter (9.8, steps 3–4); with
 * `markReady` false, stops before `ready:<id>`, as a writer that died there would. Returns the
 * new id, or undefined when the list had moved.
 */
export async function growLayer(redis: Redis, l: Layered, version: string, entry: Omit<Entry, 'id'>, now: number, markReady = true): Promise<number | undefined> {
  const meta = `${l.name}:meta`
  const minWindow = l.policy === 'rotating' ? entry.window - l.keep + 1 : 0
  const metaTtl = l.policy === 'rotating' ? String(BigInt(l.keep + 1) * BigInt(l.seconds) * 1000n + 60_000n) : '0'
  const f = await redis.hgetall(meta)
  if (f.version !== version) return undefined
  if (f.check !== undefined && f.check !== layeredCheck(f)) throw new SpecError('BLOOM_CORRUPT_STORE', 'layered check')
  const kept: string[] = []
  const dropped: string[] = []
  for (const e of parseLayers(f.layers ?? '')) (e.window >= minWindow ? kept : dropped).push(`${e.id}/${e.window}/${e.index}/${e.capacity}`)
  const id = String(Number(f.nextId) + 1)
  kept.push(`${id}/${entry.window}/${entry.index}/${entry.capacity}`)
  const after = { ...f, layers: kept.join(','), version: String(Number(version) + 1), nextId: id }
  const check = f.check === undefined ? '' : layeredCheck(after)
  const applied = await redis.eval(GROW, 1, meta, version, f.check ?? '', after.layers, after.version, id, check, metaTtl, ...dropped.map((e) => e.split('/')[0]))
  if (Number(applied) !== 1) return undefined
  const ttlMs = l.policy === 'rotating' ? Math.max(1, Math.ceil(((entry.window + l.keep) * l.seconds * 1000 + 60_000 - now) / 1000)) * 1000 : 0
  await createFixed(redis, `${l.name}:L${id}`, sizeLayer(l, entry.index, entry.capacity), ttlMs, l.feedLength)
  if (markReady) await redis.hset(meta, `ready:${id}`, '1')
  return Number(id)
}

/**
 * Adds keys as 9.8 says: checked first, then into the writable layer with reservations, one key
 * at a time in effect; then confirmed (step 7): keys whose answer rests on a layer no longer judged
 * (a rebuild listed its layer meanwhile) go back to step 1.
 */
export async function addLayered(redis: Redis, l: Layered, keys: string[], now = Date.now()): Promise<boolean[]> {
  const answers = new Array<boolean>(keys.length).fill(false)
  let todo = keys.map((_, i) => i)
  while (todo.length > 0) {
    const { found, judged } = await probeLayered(redis, l, todo.map((i) => keys[i]), now, true)
    const held = todo.filter((_, j) => found[j])
    for (const i of todo) answers[i] = false
    const rested = new Map<number, number[]>()
    const unwritten = await writeLayered(redis, l, keys, todo.filter((_, j) => !found[j]), now, answers, rested)
    const still = await judgedNow(redis, l, now)
    todo = [...(judged.some((id) => !still.has(id)) ? held : []), ...[...rested].flatMap(([id, slots]) => (still.has(id) ? [] : slots)), ...unwritten].sort((a, b) => a - b)
  }
  return answers
}

/**
 * Steps 2–6 for the keys `pending` judged new: answers[i] set, and each layer's id mapped to the
 * keys whose answer rests on it. Returns the keys not written because their layer was found gone
 * and no longer listed (they go back to step 1).
 */
async function writeLayered(redis: Redis, l: Layered, keys: string[], pending: number[], now: number, answers: boolean[], rested: Map<number, number[]>): Promise<number[]> {
  const meta = `${l.name}:meta`
  let previous: { fixed: Fixed; id: number } | undefined
  const rest = (id: number, slots: number[]) => rested.set(id, [...(rested.get(id) ?? []), ...slots])
  while (pending.length > 0) {
    const [layers, version] = await redis.hmget(meta, 'layers', 'version')
    if (version === null) throw new SpecError('BLOOM_NOT_FOUND', l.name)
    const entries = parseLayers(layers ?? '')
    // Step 2: the current window's newest entry (never an older window: the list stays in window order).
    const window = l.policy === 'rotating' ? currentWindow(l, entries, now) : 0
    const newest = entries.filter((e) => e.window === window).at(-1)
    const count = newest === undefined ? 0 : Number((await redis.hget(meta, `count:${newest.id}`)) ?? 0)
    if (newest === undefined || newest.window !== window || (l.growth !== 0 && count >= newest.capacity)) {
      const same = newest !== undefined && newest.window === window
      const index = same ? newest.index + 1 : 0
      const capacity = l.growth === 0 ? l.capacity : Math.max(l.capacity * l.growth ** index, same ? newest.capacity * l.growth : 0)
      await growLayer(redis, l, version, { window, index, capacity }, now)
      continue
    }
    try {
      let layer = await openLayer(redis, l, newest)
      if (layer === undefined) {
        await createFixed(redis, `${l.name}:L${newest.id}`, sizeLayer(l, newest.index, newest.capacity), 0, l.feedLength)
        await redis.hset(meta, `ready:${newest.id}`, '1')
        layer = await openFixed(redis, `${l.name}:L${newest.id}`)
      }
      if (previous !== undefined && previous.id !== newest.id) {
        // Step 6: keys left over from a layer that filled are judged against it again.
        const inPrevious = await hasFixed(redis, previous.fixed, pending.map((i) => keys[i]))
        rest(previous.id, pending.filter((_, j) => inPrevious[j]))
        pending = pending.filter((_, j) => !inPrevious[j])
        if (pending.length === 0) break
      }
      previous = { fixed: layer, id: newest.id }
      const key = `count:${newest.id}`
      const want = l.growth === 0 ? 0 : Math.min(pending.length, Math.max(1, newest.capacity - count))
      let granted = pending.length
      if (l.growth !== 0) {
        const total = Number(await redis.hincrby(meta, key, want))
        granted = Math.max(0, Math.min(want, newest.capacity - (total - want)))
        if (granted === 0) {
          await redis.hincrby(meta, key, -want)
          continue
        }
      }
      const taking = pending.slice(0, granted)
      const fresh = await addFixed(redis, layer, taking.map((i) => keys[i]))
      pending = pending.slice(granted)
      taking.forEach((i, j) => (answers[i] = fresh[j]))
      rest(newest.id, taking)
      await redis.hincrby(meta, key, fresh.filter(Boolean).length - want)
    } catch (error) {
      // A layer found gone: lost if still listed, else unlisted meanwhile (its keys go back to step 1).
      if (!isGone(error)) throw error
      const listed = parseLayers((await redis.hget(meta, 'layers')) ?? '').map((entry) => entry.id)
      if (listed.includes(newest.id) && (previous === undefined || listed.includes(previous.id))) throw error
      return pending
    }
  }
  return []
}

/**
 * Rebuild (9.8, scalable only): lists a layer of index 0 sized for the distinct keys, creates and
 * fills it (counting the keys new to it alone), calls `whileListed` (what other processes do
 * meanwhile), then unlists every layer before it and destroys their filters.
 */
export async function rebuildLayered(redis: Redis, l: Layered, keys: string[], whileListed: () => Promise<void> = async () => {}): Promise<void> {
  const meta = `${l.name}:meta`
  const capacity = Math.max(l.capacity, new Set(keys).size)
  let id: number | undefined
  while (id === undefined) id = await growLayer(redis, l, String(await redis.hget(meta, 'version')), { window: 0, index: 0, capacity }, Date.now())
  const layer = await openFixed(redis, `${l.name}:L${id}`)
  for (let at = 0; at < keys.length; at += 1000) {
    const fresh = await addFixed(redis, layer, keys.slice(at, at + 1000))
    await redis.hincrby(meta, `count:${id}`, fresh.filter(Boolean).length)
  }
  await whileListed()
  for (;;) {
    const f = await redis.hgetall(meta)
    const entries = parseLayers(f.layers ?? '')
    const before = entries.slice(0, entries.findIndex((entry) => entry.id === id))
    const after = { ...f, layers: entries.slice(before.length).map((e) => `${e.id}/${e.window}/${e.index}/${e.capacity}`).join(','), version: String(Number(f.version) + 1) }
    const check = f.check === undefined ? '' : layeredCheck(after)
    const applied = await redis.eval(GROW, 1, meta, f.version, f.check ?? '', after.layers, after.version, f.nextId, check, 0, ...before.map((e) => String(e.id)))
    if (Number(applied) !== 1) continue
    for (const entry of before) await destroyFixed(redis, `${l.name}:L${entry.id}`)
    return
  }
}

/** Destroy (9.6) of a fixed filter: its meta first, then its shard keys. */
async function destroyFixed(redis: Redis, name: string): Promise<void> {
  const shards = Number(await redis.hget(`${name}:meta`, 'shards'))
  await redis.del(`${name}:meta`)
  if (shards > 0) await redis.del(...shardKeys(name, shards), ...shardKeys(name, shards, 'next:'))
}

/** Each checked layer's count (9.8), oldest first. */
export async function countsOf(redis: Redis, l: Layered, now = Date.now()): Promise<number[]> {
  const entries = checkedEntries(l, parseLayers((await redis.hget(`${l.name}:meta`, 'layers')) ?? ''), now)
  if (entries.length === 0) return []
  const counts = await redis.hmget(`${l.name}:meta`, ...entries.map((e) => `count:${e.id}`))
  return counts.map((c) => (c === null ? 0 : integerField({ count: c }, 'count')))
}
