// The Redis suite's baseline: what a user would write first, one string key and one Lua call per
// 1000 keys with the bit offsets as decimal ARGV, pipelined too (so that it is not a strawman).
import { createKeyHasher, shardBitsOf } from '@bloomkit/core/store'
import { fillPositions } from '@bloomkit/core/spec'
import { sizeFilter } from '@bloomkit/core'
import { chunks } from './measure.js'
import { ERROR_RATE } from './redis-bench.js'
import type { RedisClient } from './redis-cost.js'

/** The naive baseline's batch: one Lua call per 1000 keys, offsets as decimal ARGV. */
export const NAIVE_BATCH = 1000
/**
 * Naive calls kept in flight in the 100k-key rows and the second naive row of the 1000-key rows,
 * so the baseline is pipelined too and not a strawman. The 1000-key rows compare bloomkit (one
 * batch in flight) with the naive baseline at one call in flight: like with like.
 */
export const NAIVE_IN_FLIGHT = 8

const NAIVE_ADD = `
local new = {}
local k = tonumber(ARGV[1])
for i = 0, (#ARGV - 1) / k - 1 do
  local n = 0
  for j = 2 + i * k, 1 + (i + 1) * k do
    if redis.call('SETBIT', KEYS[1], ARGV[j], 1) == 0 then n = 1 end
  end
  new[i + 1] = n
end
return new`

const NAIVE_HAS = `
local found = {}
local k = tonumber(ARGV[1])
for i = 0, (#ARGV - 1) / k - 1 do
  local f = 1
  for j = 2 + i * k, 1 + (i + 1) * k do
    if redis.call('GETBIT', KEYS[1], ARGV[j]) == 0 then f = 0 break end
  end
  found[i + 1] = f
end
return found`

/** The naive baseline's two calls over a run of keys, {@link NAIVE_IN_FLIGHT} calls in flight unless told. */
export interface NaiveBaseline {
  add(keys: readonly string[], inFlight?: number): Promise<void>
  has(keys: readonly string[], inFlight?: number): Promise<void>
}

/** The baseline a user would write first: one string key, one EVALSHA per 1000 keys with decimal offsets, sized for `capacity` keys. */
export async function naiveBaseline(redis: RedisClient, key: string, capacity: number): Promise<NaiveBaseline> {
  const parameters = sizeFilter({ capacity, errorRate: ERROR_RATE, shards: 1 })
  const hasher = await createKeyHasher(parameters.seed)
  const bits = shardBitsOf(parameters)
  const positions = new Uint32Array(parameters.hashes)
  // defineCommand sends EVALSHA and falls back to EVAL once per node (NOSCRIPT), as users do.
  redis.defineCommand('naiveAdd', { numberOfKeys: 1, lua: NAIVE_ADD })
  redis.defineCommand('naiveHas', { numberOfKeys: 1, lua: NAIVE_HAS })
  const scripts = redis as unknown as Record<'naiveAdd' | 'naiveHas', (...args: (string | number)[]) => Promise<number[]>>
  const call = (script: 'naiveAdd' | 'naiveHas', keys: readonly string[]) => {
    const args: (string | number)[] = [parameters.hashes]
    for (const key of keys) {
      hasher.hash(key)
      fillPositions(hasher.a, hasher.b, bits, parameters.hashes, positions, 0)
      for (const p of positions) args.push(p)
    }
    return scripts[script](key, ...args)
  }
  const run = async (script: 'naiveAdd' | 'naiveHas', keys: readonly string[], inFlight: number) => {
    const batches = chunks(keys, NAIVE_BATCH)
    let next = 0
    const worker = async () => {
      while (next < batches.length) await call(script, batches[next++])
    }
    await Promise.all(Array.from({ length: inFlight }, worker))
  }
  return {
    add: (keys: readonly string[], inFlight = NAIVE_IN_FLIGHT) => run('naiveAdd', keys, inFlight),
    has: (keys: readonly string[], inFlight = NAIVE_IN_FLIGHT) => run('naiveHas', keys, inFlight),
  }
}
