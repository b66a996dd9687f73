import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * Snapshots every backend must keep producing byte for byte from the same inputs (issue 21: moving
 * layered filters into core changes no bytes). The fixtures in `fixtures/golden/` were captured
 * with honest sizing (issue 20; those of the release before are in `fixtures/golden/earlier-sizing/`);
 * `BLOOMKIT_WRITE_GOLDEN=1` rewrites them, and a commit that does must say why (a new format, hash
 * scheme or sizing, never a refactor).
 */

/** Members added to every case, in this order. */
export function goldenKeys(count: number, prefix = 'golden'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}:${i}`)
}

/** Every case's seed is explicit: snapshots of filters made with a random seed cannot be compared. */
export const GOLDEN_SEED = 0x5eed

/** A fixed clock for rotating cases: 1 000 windows of 60 s after the epoch, plus a bit. */
export const GOLDEN_NOW = 60_000 * 1000 + 1234

/** Fixed filters: the options `create` takes, and how many keys go in. */
export const FIXED_CASES = {
  'fixed-blocked': { options: { capacity: 2000, errorRate: 0.01, seed: GOLDEN_SEED, layout: 'blocked' as const }, keys: 1500 },
  'fixed-classic': { options: { capacity: 2000, errorRate: 0.01, seed: GOLDEN_SEED, layout: 'classic' as const, shards: 3 }, keys: 1500 },
}

/**
 * Layered filters: scalable ones grown to four layers, and a rotating one written over three
 * windows (the clock moved between batches), so every layer-choosing rule is exercised.
 */
export const LAYERED_CASES = {
  'scalable-blocked': { options: { capacity: 300, errorRate: 0.01, growth: 2, seed: GOLDEN_SEED, layout: 'blocked' as const }, keys: 3000 },
  'scalable-classic': { options: { capacity: 300, errorRate: 0.01, growth: 3, tightening: 0.7, seed: GOLDEN_SEED, layout: 'classic' as const }, keys: 3000 },
  'rotating-growing': { options: { capacity: 200, errorRate: 0.01, growth: 2, seed: GOLDEN_SEED, window: { seconds: 60, keep: 3 } }, keys: 1200 },
}

/**
 * Where each of the rotating case's batches is added: three windows, the middle one skipped over, then one more.
 * Its bytes changed once, on purpose (issue 33 item 3): two first-time keys, `golden:503` and `golden:976`, that an
 * older window's layers held by chance (false positives) were left out of their own window before; an add writes
 * every key into its window since (docs/SPEC.md 8), so each window's second layer counts 200, not 199.
 */
export const ROTATING_STEPS = [0, 60_000, 180_000] as const

const folder = new URL('./fixtures/golden/', import.meta.url)

/**
 * The fixture `<backend>-<name>.bin`: the bytes to compare with, or, with `BLOOMKIT_WRITE_GOLDEN=1`,
 * `actual` written as the new fixture and returned.
 */
export function goldenSnapshot(backend: string, name: string, actual: Uint8Array): Uint8Array {
  const file = fileURLToPath(new URL(`${backend}-${name}.bin`, folder))
  if (process.env.BLOOMKIT_WRITE_GOLDEN === '1' || !existsSync(file)) {
    if (process.env.BLOOMKIT_WRITE_GOLDEN !== '1') throw new Error(`no golden snapshot ${file}; run with BLOOMKIT_WRITE_GOLDEN=1 to capture it`)
    writeFileSync(file, actual)
  }
  return new Uint8Array(readFileSync(file))
}

/** Every case's name, fixed and layered. */
export const GOLDEN_NAMES = [...Object.keys(FIXED_CASES), ...Object.keys(LAYERED_CASES)]

/**
 * The fixture `<backend>-<name>.bin` as the release before honest sizing (issue 20) wrote it, in
 * `fixtures/golden/earlier-sizing/`: the same inputs then gave other layer and filter sizes. Kept
 * so that every backend shows such snapshots still import, answer and export exactly as before.
 */
export function earlierGoldenSnapshot(backend: string, name: string): Uint8Array {
  return new Uint8Array(readFileSync(fileURLToPath(new URL(`earlier-sizing/${backend}-${name}.bin`, folder))))
}

/** Keys never added to a golden case, to compare answers (false positives included). */
export function goldenProbes(count = 2000): string[] {
  return goldenKeys(count, 'probe')
}
