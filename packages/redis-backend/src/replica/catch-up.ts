// One catch-up of some of a replica's shards (docs/SPEC.md 9.13): per shard, in one atomic step,
// its marker, whether its feed still holds the entry the replica stands on, and the entries
// after it, which are applied at once; beside them the meta's checked fields. A standalone server
// answers all shards and the meta in one script; a Cluster one script per shard (its feed and
// shard key share a slot) and an HMGET, all in flight together.
import { decodeFeedEntry } from '../layout/feed.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { CHECKED_FIELDS } from '../layout/meta.js'
import { isCluster } from '../wire/client.js'
import { runScript } from '../wire/script.js'
import type { ReplicaShards } from './replica-shards.js'
import { CATCH_UP } from './replica-scripts.js'

/** Entries read per shard per script call; a shard that returned this many is read on. */
export const CATCH_UP_COUNT = 256

/** The shard's bits hold every add acknowledged before the catch-up began. */
export const FRESH = 1
/** The shard must be loaded again (its position is gone: a reset, trimming, a lost feed or failover); meanwhile ask Redis. */
export const RELOAD = 2
/** The shard key lacks this filter's marker (lost, or the filter was created again): `BLOOM_DATA_LOST`. */
export const LOST = 3
/** The shard was not loaded when the catch-up began: ask Redis. */
export const NOT_READY = 4

/** What a catch-up found, per shard of the filter (0 for shards it did not read). */
export interface CatchUpResult {
  readonly status: Uint8Array
  /** Add entries applied. */
  readonly applied: number
}

type Reply = [Buffer, Array<[Buffer, Buffer[]]>?]

/**
 * Reads and applies the feeds of `list` (shards whose positions are set) until each is read to
 * its end, or found to need a load, or lost. Does not mark shards ready or not: the caller does
 * (a load's own catch-up, or a barrier).
 * @throws BloomError as a reader's batch would: the meta's verdict (`BLOOM_DATA_LOST`,
 *   `BLOOM_CORRUPT_STORE`) first, then `BLOOM_CORRUPT_STORE` for a damaged entry or a key of
 *   another type, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function catchUp(generations: ShardGenerations, replica: ReplicaShards, list: readonly number[], what: string): Promise<CatchUpResult> {
  const status = new Uint8Array(replica.parameters.shards)
  // A load that begins meanwhile voids what this catch-up read of its shard (replica-shards.ts).
  const begun = Uint32Array.from(list, (shard) => replica.loadsBegun[shard])
  const current = (shard: number) => replica.loadsBegun[shard] === begun[list.indexOf(shard)]
  let applied = 0
  let pending = list.slice()
  let metaChecked = false
  while (pending.length > 0) {
    const replies = await readFeeds(generations, replica, pending, metaChecked ? undefined : what)
    metaChecked = true
    const again: number[] = []
    for (let i = 0; i < pending.length; i++) {
      const shard = pending[i]
      const [marker, entries] = replies[i]
      if (!current(shard)) {
        status[shard] = NOT_READY
        continue
      }
      if (marker.length !== 4 || !generations.accepts(marker.readUInt32BE(0), 'live')) {
        status[shard] = LOST
        continue
      }
      if (entries === undefined) {
        status[shard] = RELOAD
        continue
      }
      let reset = false
      for (const [id, fields] of entries) {
        const entry = decodeFeedEntry(id.toString('latin1'), fields)
        if (entry.kind === 'reset') {
          // A reset after the position: the feed was started again (its old entries deleted)
          // and this one reused the position's ID and tag, which a writer's random tag rules out
          // unless the feed was damaged; either way the bits before it prove nothing.
          reset = true
          break
        }
        replica.apply(shard, entry)
        applied++
        replica.positions[shard] = { id: entry.id, tag: entry.tag }
      }
      if (reset) status[shard] = RELOAD
      else if (entries.length === CATCH_UP_COUNT) again.push(shard)
      else status[shard] = FRESH
    }
    pending = again
  }
  return { status, applied }
}

/** One round trip: per shard `[marker, entries after the position]` (no entries: the position is gone). Checks the meta when `what` is given. */
async function readFeeds(generations: ShardGenerations, replica: ReplicaShards, shards: readonly number[], what: string | undefined): Promise<Reply[]> {
  const { client, names, shardBytes, timeout } = generations
  const argsOf = (list: readonly number[], meta: boolean) => {
    const keys: string[] = []
    const positions: Array<string | Buffer> = []
    for (const shard of list) {
      keys.push(names.feed(shard), names.shard(shard))
      const position = replica.positions[shard]!
      positions.push(position.id, Buffer.from(position.tag))
    }
    const fields = meta ? CHECKED_FIELDS : []
    return [keys.length + (meta ? 1 : 0), ...keys, ...(meta ? [names.meta] : []), shardBytes, CATCH_UP_COUNT, list.length, fields.length, ...fields, ...positions]
  }
  const label = `catch up on ${names.feed(shards[0])}`
  if (!isCluster(client)) {
    const reply = (await runScript(client, CATCH_UP, argsOf(shards, what !== undefined), timeout, label)) as unknown[]
    if (what !== undefined) generations.checkMeta((reply[shards.length] as Array<Buffer | null>).map((value) => (value === null ? null : value.toString())), what)
    return reply.slice(0, shards.length) as Reply[]
  }
  // A Cluster: one script per shard (its keys share a slot), the meta beside them; its verdict first.
  const meta = what === undefined ? undefined : generations.verifyMeta(what)
  const settled = await Promise.allSettled([meta, ...shards.map((shard) => runScript(client, CATCH_UP, argsOf([shard], false), timeout, label))])
  for (const result of settled) if (result.status === 'rejected') throw result.reason
  return settled.slice(1).map((result) => ((result as PromiseFulfilledResult<unknown[]>).value[0]) as Reply)
}
