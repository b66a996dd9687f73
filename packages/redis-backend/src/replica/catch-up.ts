// One catch-up of some of a replica's shards (docs/SPEC.md 9.13): per shard, in one atomic step,
// its marker, whether its feed still holds the entry the replica stands on, and the entries
// after it, which are applied at once; beside them the meta's checked fields. A standalone server
// answers all shards and the meta in one script; a Cluster one script per node (each shard's feed
// and shard key share a slot; the node's shards are read in one script) and an HMGET, all in
// flight together.
import { decodeFeedEntry } from '../layout/feed.js'
import type { ShardGenerations } from '../layout/shard-generations.js'
import { CHECKED_FIELDS } from '../layout/meta.js'
import { refusedAcrossSlots } from '../bits/block-read.js'
import { isCluster, masterOfSlot } from '../wire/client.js'
import { runScript } from '../wire/script.js'
import type { ReplicaShards } from './replica-shards.js'
import { CATCH_UP, CATCH_UP_ON_NODE } from './replica-scripts.js'

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
  const { client, names, timeout } = generations
  const label = `catch up on ${names.feed(shards[0])}`
  if (!isCluster(client)) {
    const reply = (await runScript(client, CATCH_UP, catchUpArgs(generations, replica, shards, { withMeta: what !== undefined }), timeout, label)) as unknown[]
    if (what !== undefined) generations.checkMeta((reply[shards.length] as Array<Buffer | null>).map((value) => (value === null ? null : value.toString())), what)
    return reply.slice(0, shards.length) as Reply[]
  }
  // A Cluster: one script per node for the shards its slot map puts there, the meta beside them; its verdict first.
  const meta = what === undefined ? undefined : generations.verifyMeta(what)
  const groups = byNode(generations, shards)
  const settled = await Promise.allSettled([meta, ...groups.map((group) => readOnNode(generations, replica, group, label))])
  for (const result of settled) if (result.status === 'rejected') throw result.reason
  const replies = new Array<Reply>(shards.length)
  const index = new Map(shards.map((shard, i) => [shard, i]))
  groups.forEach((group, g) => {
    const found = (settled[g + 1] as PromiseFulfilledResult<Reply[]>).value
    group.forEach((shard, j) => (replies[index.get(shard)!] = found[j]))
  })
  return replies
}

/** CATCH_UP's keys and arguments for `list` (with the meta when `withMeta`). */
function catchUpArgs(generations: ShardGenerations, replica: ReplicaShards, list: readonly number[], { withMeta }: { readonly withMeta: boolean }): Array<string | number | Buffer> {
  const { names, shardBytes } = generations
  const keys: string[] = []
  const positions: Array<string | Buffer> = []
  for (const shard of list) {
    keys.push(names.feed(shard), names.shard(shard))
    const position = replica.positions[shard]!
    positions.push(position.id, Buffer.from(position.tag))
  }
  const fields = withMeta ? CHECKED_FIELDS : []
  return [keys.length + (withMeta ? 1 : 0), ...keys, ...(withMeta ? [names.meta] : []), shardBytes, CATCH_UP_COUNT, list.length, fields.length, ...fields, ...positions]
}

/** How long catch-ups read shard by shard after a node refused a script spanning slots (a server before Redis 7.0, resharding): ms. */
const ACROSS_SLOTS_RETRY_MS = 60_000
/** Per filter, until when its catch-ups read shard by shard. */
const perShardUntil = new WeakMap<ShardGenerations, number>()

/** `shards` grouped by the master the client's slot map names for each one's slot (a group of one where unknown). */
function byNode(generations: ShardGenerations, shards: readonly number[]): number[][] {
  const groups = new Map<string, number[]>()
  const alone: number[][] = []
  for (const shard of shards) {
    const node = masterOfSlot(generations.client, generations.names.slot(shard))
    if (node === undefined) alone.push([shard])
    else if (groups.has(node)) groups.get(node)!.push(shard)
    else groups.set(node, [shard])
  }
  return [...groups.values(), ...alone]
}

/**
 * Reads `group` (shards the slot map puts on one node) with one script there (CATCH_UP_ON_NODE),
 * each shard in one step as alone. Should Redis refuse it (the map was stale, a slot is
 * migrating, a server before Redis 7.0), each shard is read by a CATCH_UP of its own, which the
 * client routes and redirects as any command, and so for a while.
 */
async function readOnNode(generations: ShardGenerations, replica: ReplicaShards, group: readonly number[], label: string): Promise<Reply[]> {
  const { client, names, shardBytes, timeout } = generations
  const alone = (shard: number) => runScript(client, CATCH_UP, catchUpArgs(generations, replica, [shard], { withMeta: false }), timeout, label).then((reply) => (reply as Reply[])[0])
  if (group.length === 1 || (perShardUntil.get(generations) ?? 0) > Date.now()) return Promise.all(group.map(alone))
  const args: Array<string | number | Buffer> = [1, names.feed(group[0]), shardBytes, CATCH_UP_COUNT, group.length, 0]
  for (const shard of group) {
    const position = replica.positions[shard]!
    args.push(names.feed(shard), names.shard(shard), position.id, Buffer.from(position.tag))
  }
  try {
    return (await runScript(client, CATCH_UP_ON_NODE, args, timeout, label)) as Reply[]
  } catch (error) {
    if (!refusedAcrossSlots(error)) throw error
    perShardUntil.set(generations, Date.now() + ACROSS_SLOTS_RETRY_MS)
    return Promise.all(group.map(alone))
  }
}
