import { BloomError } from '@bloomkit/core'
import { callRedis } from '../errors.js'
import { forEachLimited, ShardGenerations } from '../layout/shard-generations.js'
import { KeyNames } from '../layout/key-names.js'
import { CHECKED_FIELDS, checkedValues, formatOf, metaCheck, randomEpoch } from '../layout/meta.js'
import type { RedisClient } from '../wire/client.js'

// An import over a filter with other parameters (docs/SPEC.md 9.6, "Replacing parameters"): other
// bits, hashes, shards, seed or layout mean other shard keys and another meta, so the new filter is
// staged in next-generation keys under its own shard count while the old one keeps serving, then
// the meta is switched to it in one script and its shards are swapped in. Two meta fields say what
// a killed run left behind, so that a forced run or a destroy can clear it:
/** Before the switch: the shard count of the next-generation keys being staged. */
const STAGED = 'staged'
/** After the switch, until the end of the swap: the old shard count, whose keys are still to be deleted. */
const RETIRED = 'retired'

/** HSET staged ARGV[2] under the lock held with token ARGV[1]; 0 if the lock was lost. */
const STAGE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'staged', ARGV[2])
return 1`

/**
 * The switch: under the lock held with token ARGV[1], the meta takes the new filter's fields
 * (ARGV[3] …, field/value pairs) and the state `importing` (so opens wait for the swap), and
 * records the old shard count ARGV[2] as `retired`. 0 if the lock was lost.
 */
const SWITCH = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'importing', 'retired', ARGV[2], unpack(ARGV, 3))
return 1`

/** Drops the field `staged` (what a killed run staged was deleted). */
const DROP_STAGED = `redis.call('HDEL', KEYS[1], 'staged')
return 1`

/** Keys deleted at once by the clean-ups here. */
const CONCURRENCY = 16

/** Unlocks (ARGV[2] '1': one generation more) and drops the run's fields, under token ARGV[1]. */
const FINISH = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'staged', 'retired')
redis.call('HSET', KEYS[1], 'state', 'ready', 'token', '')
if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], 'generation', 1) end
return 1`

/** A replacement under way: the old filter's shards (locked) and the new one's (staged). */
export interface Replacement {
  readonly old: ShardGenerations
  readonly next: ShardGenerations
  readonly token: string
}

/**
 * Starts replacing the locked filter `old` (locked with `token`) by one with `next`'s parameters:
 * records the staged shard count in the meta. `next` gets a fresh epoch, another than the old one,
 * so no reader of the old filter ever accepts a new shard as its own.
 */
export async function stageReplacement(old: ShardGenerations, token: string, counterBits: number, parameters: ShardGenerations['parameters']): Promise<Replacement> {
  let epoch = randomEpoch()
  while (epoch === old.epoch) epoch = randomEpoch()
  // The new filter keeps the old one's feed (store format and feedLength).
  const next = new ShardGenerations(old.client, new KeyNames(old.names.name, parameters.shards), parameters, epoch, old.timeout, counterBits, old.feedLength)
  const what = `import "${old.names.name}"`
  // A forced run may take over a rebuild's lock: unflag the old shards, so no writer copies adds
  // into next-generation keys that now hold the new filter.
  await old.forEachShard((shard) => old.markLive(shard, 'plain'))
  if (Number(await old.script(STAGE, [1, old.names.meta, token, String(parameters.shards)], what)) !== 1) throw lockLost(old)
  return { old, next, token }
}

/**
 * Seals the staged shards, switches the meta to the new filter and swaps its shards in, then
 * deletes the old filter's keys that the new one does not reuse, and unlocks. A failure before the
 * switch leaves the old filter whole and unlocked ({@link abandonReplacement} is done here).
 */
export async function commitReplacement(replacement: Replacement): Promise<void> {
  const { old, next, token } = replacement
  const name = old.names.name
  const what = `import "${name}"`
  try {
    await next.forEachShard((shard) => next.sealNext(shard))
    const values = checkedValues(next.parameters, next.epoch, formatOf(next.feedLength))
    const fields = [...CHECKED_FIELDS.flatMap((field, i) => [field, values[i]]), 'check', metaCheck(values)]
    if (Number(await old.script(SWITCH, [1, old.names.meta, token, String(old.parameters.shards), ...fields], what)) !== 1) throw lockLost(old)
  } catch (error) {
    await abandonReplacement(replacement)
    throw error
  }
  // Switched: from here the run only goes forward. A failure leaves the state `importing` with
  // `retired` set, which destroy clears.
  const ttlMs = await next.metaTtlMs(what)
  await next.forEachShard((shard) => next.swapNext(shard, ttlMs))
  await deleteRetired(old.client, name, old.parameters.shards, next.parameters.shards, old.timeout)
  await old.script(FINISH, [1, old.names.meta, token, '1'], what)
}

/** Undoes a replacement that failed before the switch: the staged keys go, the old filter is unlocked as it was. */
export async function abandonReplacement({ old, next, token }: Replacement): Promise<void> {
  try {
    await next.forEachShard((shard) => next.call(next.client.del(next.names.nextShard(shard)), 'drop staged shard'))
    await old.script(FINISH, [1, old.names.meta, token, '0'], 'abandon')
  } catch {
    // Redis is failing: the original error is the one to report; the lock left behind is
    // reported as BLOOM_LOCKED, with the way out (force, or destroy).
  }
}

/**
 * Clears what a killed replacement left before its switch (staged keys, the `staged` field), once
 * a forced rebuild or import took the lock. The filter itself is untouched.
 */
export async function clearStaged(shards: ShardGenerations): Promise<void> {
  const { client, names } = shards
  const what = `clear the staged shards of "${names.name}"`
  const staged = Number(await shards.call(client.hget(names.meta, STAGED), what))
  if (!Number.isInteger(staged) || staged < 1) return
  const keys = new KeyNames(names.name, staged)
  await forEachLimited(staged, CONCURRENCY, (shard) => shards.call(client.unlink(keys.nextShard(shard)), what))
  await shards.script(DROP_STAGED, [1, names.meta], what)
}

/**
 * The keys a killed replacement may have left besides the filter its meta describes: staged
 * next-generation keys (before the switch) and the old filter's keys (after it). For destroy.
 */
export function leftoverKeys(name: string, fields: Record<string, string>): string[] {
  const keys: string[] = []
  for (const field of [STAGED, RETIRED]) {
    const count = Number(fields[field])
    if (!Number.isInteger(count) || count < 1 || count > 65_536) continue
    const names = new KeyNames(name, count)
    for (let shard = 0; shard < count; shard++) keys.push(names.shard(shard), names.nextShard(shard), names.feed(shard))
  }
  return keys
}

/** Deletes the old filter's shard keys (live and next) that the new filter's keys do not reuse. */
async function deleteRetired(client: RedisClient, name: string, oldShards: number, newShards: number, timeout: number): Promise<void> {
  const fresh = new KeyNames(name, newShards)
  const kept = new Set(Array.from({ length: newShards }, (_, shard) => fresh.shard(shard)))
  const old = new KeyNames(name, oldShards)
  await forEachLimited(oldShards, CONCURRENCY, (shard) => {
    const live = old.shard(shard)
    // A live key, its next generation and its feed share a hash tag: one UNLINK, also on a Cluster.
    // A kept key's feed was reset by the new filter's swap.
    return callRedis(kept.has(live) ? client.unlink(old.nextShard(shard)) : client.unlink(live, old.nextShard(shard), old.feed(shard)), timeout, `import "${name}"`)
  })
}

function lockLost(shards: ShardGenerations): BloomError {
  return new BloomError('BLOOM_LOCKED', `filter "${shards.names.name}": another process took its lock (force) during the import; nothing was replaced`)
}
