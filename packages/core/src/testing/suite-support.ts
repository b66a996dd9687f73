import { PositionBatch } from '../bits/position-batch.js'
import { shardBitsOf, type FilterParameters } from '../parameters.js'

/** The test runner's `test` (vitest, node:test, …): only its name-and-body form is used. */
export type TestFunction = (name: string, body: () => Promise<void>, timeout?: number) => void

/** A failed check of a conformance suite: its message says what the contract expected. */
export class SuiteFailure extends Error {
  override name = 'SuiteFailure'
}

/** Throws a {@link SuiteFailure} with `message` unless `condition` holds. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new SuiteFailure(message)
}

/** Checks that `actual` is a Uint8Array holding exactly `expected`. */
export function checkBytes(actual: Uint8Array, expected: ArrayLike<number>, what: string): void {
  check(actual instanceof Uint8Array, `${what}: expected a Uint8Array`)
  check(actual.length === expected.length, `${what}: expected ${expected.length} bytes, got ${actual.length}`)
  for (let i = 0; i < expected.length; i++) {
    check(actual[i] === expected[i], `${what}: byte ${i} is ${actual[i]}, expected ${expected[i]}`)
  }
}

/** What `body` threw or rejected with (sync and async methods alike); a failure if it returned. */
export async function caught(body: () => unknown, what: string): Promise<unknown> {
  try {
    await body()
  } catch (error) {
    return error
  }
  throw new SuiteFailure(`${what}: expected an error, got none`)
}

/** A batch holding these keys' shards and positions. */
export function batchOf(hashes: number, keys: Array<{ shard: number; positions: number[] }>): PositionBatch {
  const batch = new PositionBatch(keys.length, hashes)
  keys.forEach(({ shard, positions }, i) => {
    batch.shards[i] = shard
    batch.positions.set(positions, i * hashes)
  })
  batch.size = keys.length
  return batch
}

/** A deterministic spread of keys over every shard (xorshift, so the suite itself is reproducible). */
export function spreadKeys(parameters: FilterParameters, count: number, seed: number): Array<{ shard: number; positions: number[] }> {
  let x = seed >>> 0 || 1
  const next = () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
  const shardBits = shardBitsOf(parameters)
  return Array.from({ length: count }, (_, i) => ({
    shard: i % parameters.shards,
    positions: Array.from({ length: parameters.hashes }, () => Math.floor(next() * shardBits)),
  }))
}
