// The meta hash as a lock (docs/SPEC.md 9.3): creating it, waiting while another process creates
// a filter, taking and releasing the lock of a rebuild, import or clear, and undoing a run that failed.
import { BloomError, type FilterParameters } from '@bloomkit/core'
import { adoptsStored, formatParameters, seedNote } from '@bloomkit/core/store'
import { callRedis } from '../errors.js'
import type { RedisClient } from '../wire/client.js'
import { metaKey } from './key-names.js'
import { decodeMeta, encodeMeta, metaFields, randomToken, STORE_FORMAT, type FilterMeta, type FilterState } from './meta.js'
import { CREATE_META, DROP_META, LOCK_META, UNLOCK_META } from './scripts.js'
import type { ShardGenerations } from './shard-generations.js'

/** How often a waiting create or open looks again at a filter another process is creating. */
const POLL_MS = 50

/** The stored meta of `name`, or undefined when there is none. */
export async function readMeta(client: RedisClient, name: string, timeout: number): Promise<FilterMeta | undefined> {
  const fields = metaFields(await callRedis(client.hgetall(metaKey(name)), timeout, `open "${name}"`))
  if (Object.keys(fields).length === 0) return undefined
  return decodeMeta(name, fields)
}

/** Reads the meta, waiting (up to `lockWait` ms) while another process creates or imports the filter. */
export async function readSettledMeta(client: RedisClient, name: string, timeout: number, lockWait: number): Promise<FilterMeta> {
  return untilSettled(name, lockWait, async () => {
    const meta = await readMeta(client, name, timeout)
    if (meta === undefined) throw notFound(name)
    return { read: meta, meta }
  })
}

/** `BLOOM_NOT_FOUND` for an open of `name`. */
export function notFound(name: string): BloomError {
  return new BloomError('BLOOM_NOT_FOUND', `no filter named "${name}" in Redis`)
}

/**
 * Runs `read` again (every {@link POLL_MS} ms, up to `lockWait` ms) while the meta it returns is
 * held by a create or an import, which leave a name unusable until they finish; resolves to the
 * first read that is usable. `meta` undefined: nothing to wait for (a layered filter has no such state).
 * @throws BloomError `BLOOM_LOCKED` once `lockWait` has passed, and what `read` throws.
 */
export async function untilSettled<T>(name: string, lockWait: number, read: () => Promise<{ readonly read: T; readonly meta?: FilterMeta }>): Promise<T> {
  const deadline = Date.now() + lockWait
  for (;;) {
    const { read: value, meta } = await read()
    if (meta === undefined || (meta.state !== 'creating' && meta.state !== 'importing')) return value
    if (Date.now() >= deadline) {
      throw new BloomError(
        'BLOOM_LOCKED',
        `filter "${name}" is still being ${meta.state === 'creating' ? 'created' : 'imported'} by another process; if it died, RedisBloomFilter.destroy() it and create it again`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/** How {@link createMeta} judges and words a filter it finds already there. */
export interface CreateMetaOptions {
  /** Who asks, in the message of a mismatch: `requested` (a create), `the snapshot is` (an import). Default: `requested`. */
  readonly theirs?: string
  /** Whether the caller chose the seed; false (left to chance) takes the stored filter's seed. Default: true. */
  readonly seeded?: boolean
  /** Whether the filter is a counting one (meta field `kind` = `counting`). Default: false. */
  readonly counting?: boolean
  /** Sizes an earlier release gave these options: a stored filter of one of them is accepted. Default: none. */
  readonly earlier?: readonly FilterParameters[]
  /** What the caller can do about a mismatch, ending its message. Default: a create's (open it, or another name). */
  readonly remedy?: string
}

/**
 * Creates the meta hash of `shards`' filter in `state` with lock `token`, unless one exists: then
 * its stored parameters must equal these, the seed aside when `seeded` is false, or one of the
 * `earlier` sizes (else `BLOOM_INCOMPATIBLE`), and its meta is returned.
 */
export async function createMeta(shards: ShardGenerations, state: FilterState, token: string, what: string, options: CreateMetaOptions = {}): Promise<FilterMeta | undefined> {
  const stored = await createOrFindMeta(shards, state, token, what, options)
  if (stored !== undefined) checkStoredMeta(shards, stored, options)
  return stored
}

/**
 * Creates the meta hash of `shards`' filter in `state` with lock `token`, unless one exists: then
 * resolves to that one's meta, decoded (the script that tried to create it read it), not yet
 * judged ({@link checkStoredMeta}); undefined when it was created.
 */
export async function createOrFindMeta(shards: ShardGenerations, state: FilterState, token: string, what: string, { counting = false }: Pick<CreateMetaOptions, 'counting'> = {}): Promise<FilterMeta | undefined> {
  const { names, parameters, epoch, feedLength } = shards
  const fields = encodeMeta(parameters, epoch, state, token, feedLength)
  if (counting) fields.push('kind', 'counting')
  const created = (await shards.script(CREATE_META, [1, names.meta, ...fields], what, { replies: 'text' })) as unknown[]
  if (Number(created[0]) === 1) return undefined
  return decodeMeta(names.name, metaFields(created.slice(1)))
}

/**
 * Refuses a filter found under the name that is not the one `shards` describe: another kind, no
 * feed when one is asked for, or other parameters (the seed aside when `seeded` is false, or one of
 * the `earlier` sizes).
 * @throws BloomError `BLOOM_INCOMPATIBLE` worded by `options`.
 */
export function checkStoredMeta(shards: ShardGenerations, stored: FilterMeta, options: CreateMetaOptions = {}): void {
  const { theirs = 'requested', seeded = true, counting = false, earlier = [], remedy = 'open it (open reads its parameters from Redis), or use another name' } = options
  const { names, parameters, feedLength } = shards
  if ((stored.counting === true) !== counting) {
    throw new BloomError(
      'BLOOM_INCOMPATIBLE',
      `filter "${names.name}" exists as a ${stored.counting === true ? 'counting' : 'plain'} filter; ${theirs} a ${counting ? 'counting' : 'plain'} one`,
    )
  }
  // A feed asked for must be there (a replica follows it); a filter that has one is fine without asking.
  if (feedLength > 0 && stored.feedLength === undefined) {
    throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${names.name}" exists without a feed (store format ${STORE_FORMAT}); feed: true was asked for. Create the filter with a feed under another name, or import its snapshot there`)
  }
  // A creator that left the seed to chance (`seeded` false) takes the stored filter's seed.
  if (!adoptsStored({ parameters, seeded, earlier }, stored.parameters)) {
    throw new BloomError(
      'BLOOM_INCOMPATIBLE',
      `filter "${names.name}" exists with other parameters: stored ${formatParameters(stored.parameters)}, ${theirs} ${formatParameters(parameters)}${seedNote(stored.parameters, parameters, { seeded })}; ${remedy}`,
    )
  }
}

/** How {@link lockMeta} takes the lock. */
export interface LockOptions {
  /** Take it from a holder that died (whatever state holds it). Default: false. */
  readonly force?: boolean
  /** The token to hold it with (an import names its token before it knows whether the name is free). Default: a new one. */
  readonly token?: string
}

/**
 * Takes the filter's lock for a rebuild, an import over an existing filter (`replacing`), or a
 * clear; returns the lock's token.
 * @throws BloomError `BLOOM_NOT_FOUND` (the meta is gone), `BLOOM_INCOMPATIBLE` (the name was
 *   created again), `BLOOM_LOCKED` (another holds it, without `force`).
 */
export async function lockMeta(shards: ShardGenerations, state: FilterState, { force = false, token = randomToken() }: LockOptions = {}): Promise<string> {
  const name = shards.names.name
  const result = String(
    await shards.script(LOCK_META, [1, shards.names.meta, String(shards.epoch), state, token, force ? '1' : '0'], `${state} "${name}"`, { replies: 'text' }),
  )
  if (result === 'ok') return token
  if (result === 'missing') throw new BloomError('BLOOM_NOT_FOUND', `filter "${name}" no longer exists (expired or destroyed)`)
  if (result === 'replaced') throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" was destroyed and created again; open it anew`)
  throw new BloomError('BLOOM_LOCKED', `filter "${name}" is busy (${result}); wait, or pass { force: true } if that process died`)
}

/** How {@link unlockMeta} releases the lock. */
export interface UnlockOptions {
  /** The bits were replaced (some shards may have been swapped): count a new generation. Default: false. */
  readonly replaced?: boolean
}

/** Releases the lock held with `token`, counting a new generation when the bits were `replaced`. */
export async function unlockMeta(shards: ShardGenerations, token: string, what: string, { replaced = false }: UnlockOptions = {}): Promise<void> {
  await shards.script(UNLOCK_META, [1, shards.names.meta, token, replaced ? '1' : '0'], what)
}

/** Deletes the meta hash if its lock is still held with `token` (a create or import that failed). */
async function dropMeta(shards: ShardGenerations, token: string): Promise<void> {
  await shards.script(DROP_META, [1, shards.names.meta, token], 'abandon')
}

/** How {@link abandon} undoes a run. */
export interface AbandonOptions {
  /** The run created the name: drop the meta and the shards with it. Default: false (only the lock). */
  readonly dropNew?: boolean
  /** Some shards may have been swapped before the failure: count a new generation. Default: false. */
  readonly replaced?: boolean
}

/**
 * Undoes an unfinished create, import, rebuild or clear: drops the next generations, then the
 * meta (with the shards, for a name that was new: `dropNew`) or only the lock, counting a
 * generation when `replaced`. Never throws: Redis failing, the caller's error is the one to report.
 */
export async function abandon(shards: ShardGenerations, token: string, { dropNew = false, replaced = false }: AbandonOptions = {}): Promise<void> {
  const { client, names } = shards
  try {
    await shards.forEachShard((shard) => shards.call(client.del(names.nextShard(shard)), 'drop next generation'))
    if (dropNew) {
      await shards.forEachShard((shard) => shards.call(client.del(names.shard(shard), names.feed(shard)), 'abandon'))
      await dropMeta(shards, token)
    } else {
      await unlockMeta(shards, token, 'abandon', { replaced })
    }
  } catch {
    // Redis is failing: the original error is the one to report. A lock left behind is
    // reported as BLOOM_LOCKED later, with the way out (force, or destroy).
  }
}
