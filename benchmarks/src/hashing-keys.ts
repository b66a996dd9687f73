import { xorshift32 } from './measure.js'

/** Keys per set: the same count for every length, hasher and process. */
export const KEYS = 10_000
export const LENGTHS = [8, 16, 32, 64, 128, 256, 1024]
export const QUICK_LENGTHS = [16, 32, 64, 256]

/** A key set of the hashing suite, by id (`len:16`, `user`, `uuid`, `url`). */
export interface KeySet {
  readonly id: string
  readonly name: string
  /** The ASCII length of every key, 0 for the sets of real key shapes (lengths vary). */
  readonly length: number
  readonly keys: string[]
}

export function keySetIds(quick: boolean): string[] {
  return [...(quick ? QUICK_LENGTHS : LENGTHS).map((length) => `len:${length}`), 'user', 'uuid', 'url']
}

/** The set `id`: the same generator and fixed seeds every run. */
export function keySet(id: string): KeySet {
  if (id.startsWith('len:')) {
    const length = Number(id.slice(4))
    return { id, name: `${length}-char key`, length, keys: asciiKeys(length) }
  }
  const set = realKeys().find((candidate) => candidate.id === id)
  if (set === undefined) throw new Error(`no hashing key set ${id}`)
  return set
}

function asciiKeys(length: number): string[] {
  return Array.from({ length: KEYS }, (_, i) => `${i}:`.padEnd(length, 'abcdefghijklmnopqrstuvwxyz').slice(0, length))
}

/** The keys people store: `user:<n>`, version-4-shaped UUIDs, 60-char URLs (one xorshift32 stream with a fixed seed). */
function realKeys(): KeySet[] {
  const next = xorshift32(25)
  const hex = (n: number, digits: number) => n.toString(16).padStart(8, '0').slice(8 - digits)
  const uuids = Array.from({ length: KEYS }, () =>
    `${hex(next(), 8)}-${hex(next(), 4)}-4${hex(next(), 3)}-${hex((next() & 0x3fff) | 0x8000, 4)}-${hex(next(), 4)}${hex(next(), 8)}`)
  const urls = Array.from({ length: KEYS }, (_, i) =>
    `https://shop.example.com/products/${i % 97}/item-${next() % 1_000_000}?ref=news`.padEnd(60, '&x=1').slice(0, 60))
  return [
    { id: 'user', name: '`user:<n>` (10–14 chars)', length: 0, keys: Array.from({ length: KEYS }, (_, i) => `user:${(next() % 100_000_000) + i}`) },
    { id: 'uuid', name: 'UUID (36 chars)', length: 0, keys: uuids },
    { id: 'url', name: 'URL (60 chars)', length: 0, keys: urls },
  ]
}
