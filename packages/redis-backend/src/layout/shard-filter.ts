// One meta hash and its shards (docs/SPEC.md 9.1 to 9.3), as the fixed and the counting filter both
// store them: creating them (the meta as the lock, each shard allocated, sealed with its marker and
// swapped in, then the lock released) and opening them (the shards checked against the meta). The
// two filters differ only in their shards' width (`counterBits`) and the meta's kind; both create
// through createOrOpenShardFilter. A layered filter's layer is one such fixed filter, opened here
// (openFixedShards) without a public filter around it.
import type { FilterParameters, FilterParametersInput } from '@bloomkit/core'
import { checkRedisParameters, refuseFeed, type RedisSettings } from '../options.js'
import { checkClient, type RedisClient } from '../wire/client.js'
import { checkName, KeyNames } from './key-names.js'
import { abandon, createMeta, unlockMeta } from './meta-lock.js'
import { randomEpoch, randomToken, type FilterMeta } from './meta.js'
import { ShardGenerations } from './shard-generations.js'
import { readStoredMeta } from './stored-filter.js'

/** What {@link createShardFilter} makes, by name. */
export interface NewShardFilter {
  readonly client: RedisClient
  readonly name: string
  /** The parameters, checked for Redis already. */
  readonly parameters: FilterParameters
  /** Each command's bound, in ms. */
  readonly timeout: number
  /** The whole filter's TTL in ms; 0 for none. */
  readonly ttlMs: number
  /** Whether the caller chose the seed; false takes the seed of a filter already under the name. */
  readonly seeded: boolean
  /** Sizes an earlier release gave the same options: a filter of one of them already there is adopted. Default: none. */
  readonly earlier?: readonly FilterParameters[]
  /** Bits per position: 0 for a plain filter's bits, a counting filter's counter width otherwise. Default: 0. */
  readonly counterBits?: number
  /** Entries each shard's feed keeps at least; 0 for no feed. Default: 0. */
  readonly feedLength?: number
}

/**
 * Creates the meta and the shards of a new filter, or finds one already under the name with these
 * parameters (then returns undefined: open it; other parameters are `BLOOM_INCOMPATIBLE`). A failed
 * create leaves nothing behind.
 * @throws BloomError as `createMeta`, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function createShardFilter(spec: NewShardFilter): Promise<ShardGenerations | undefined> {
  const { client, name, parameters, timeout, ttlMs, seeded, earlier = [], counterBits = 0, feedLength = 0 } = spec
  const token = randomToken()
  const shards = new ShardGenerations(client, new KeyNames(name, parameters.shards), parameters, randomEpoch(), timeout, counterBits, feedLength)
  const what = `create "${name}"`
  if ((await createMeta(shards, 'creating', token, what, { seeded, earlier, counting: counterBits > 0 })) !== undefined) return undefined
  try {
    await shards.renewShards({ ttlMs })
    if (ttlMs > 0) await shards.call(client.pexpire(shards.names.meta, ttlMs), what)
    await unlockMeta(shards, token, what)
  } catch (error) {
    await abandon(shards, token, { dropNew: true })
    throw error
  }
  return shards
}

/**
 * The shards of the stored filter `meta` describes, checked against it (every shard key there with
 * its marker, the meta's fields as the shards were made).
 * @throws BloomError `BLOOM_DATA_LOST`, `BLOOM_CORRUPT_STORE`, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function openShardFilter(client: RedisClient, name: string, meta: FilterMeta, { timeout, counterBits = 0 }: { readonly timeout: number; readonly counterBits?: number }): Promise<ShardGenerations> {
  // A counting filter has no feed (its creates refuse one): its shards are never written with one.
  const feedLength = counterBits > 0 ? 0 : (meta.feedLength ?? 0)
  const shards = new ShardGenerations(client, new KeyNames(name, meta.parameters.shards), meta.parameters, meta.epoch, timeout, counterBits, feedLength)
  await shards.verifyShardsAgree(`open "${name}"`)
  return shards
}

/** A fixed or counting filter to create, as its class's `create` or `fromParameters` was called. */
export interface ShardFilterCall {
  readonly redis: RedisClient
  readonly name: string
  readonly parameters: FilterParametersInput
  /** The call's options, checked and resolved by it. */
  readonly settings: RedisSettings
  /** Whether the caller chose the seed; false takes the seed of a filter already under the name. */
  readonly seeded: boolean
  /** Sizes an earlier release gave the same options: a filter of one of them already there is adopted. Default: none. */
  readonly earlier?: readonly FilterParameters[]
  /** 0 for a fixed filter, a counting filter's counter width otherwise. */
  readonly counterBits: number
}

/**
 * The one create flow of fixed and counting filters: the client, name and parameters checked, then
 * the shards of a new filter, or, when the name holds one with these parameters, of that one (its
 * meta read, waiting up to `lockWait` while another process still creates it, and its shards checked
 * against it). A counting filter refuses a feed.
 * @throws BloomError `BLOOM_INVALID_PARAMETER`, as {@link createShardFilter}, `BLOOM_LOCKED`,
 *   `BLOOM_INCOMPATIBLE`, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function createOrOpenShardFilter(call: ShardFilterCall): Promise<ShardGenerations> {
  const { name, settings, seeded, earlier, counterBits } = call
  const client = checkClient(call.redis)
  checkName(name)
  const parameters = checkRedisParameters(call.parameters, counterBits)
  if (counterBits > 0) refuseFeed(settings)
  const { timeout, ttlMs, lockWait } = settings
  const feedLength = counterBits > 0 ? 0 : settings.feedLength
  const created = await createShardFilter({ client, name, parameters, timeout, ttlMs, seeded, earlier, counterBits, feedLength })
  if (created !== undefined) return created
  const meta = await readStoredMeta(client, name, { timeout, lockWait, asked: counterBits > 0 ? 'counting' : 'fixed' })
  return openShardFilter(client, name, meta, { timeout, counterBits })
}

/** How {@link openFixedShards} reads the meta. */
export interface OpenFixedShards {
  /** Each command's bound, in ms. */
  readonly timeout: number
  /** How long to wait (ms) while another process still creates or imports the filter. */
  readonly lockWait: number
}

/**
 * The shards of the fixed (plain) filter `name`, its meta read once it is settled, decoded and
 * checked, and the shards verified against it: what opening a layer of a layered filter needs.
 * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_INCOMPATIBLE` (a counting or layered filter),
 *   `BLOOM_LOCKED`, `BLOOM_CORRUPT_STORE`, `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_DATA_LOST`, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function openFixedShards(client: RedisClient, name: string, { timeout, lockWait }: OpenFixedShards): Promise<ShardGenerations> {
  // As `RedisBloomFilter.open` with kind 'fixed' reads it: another kind is refused naming both.
  const meta = await readStoredMeta(client, name, { timeout, lockWait, asked: 'fixed' })
  return openShardFilter(client, name, meta, { timeout })
}

/**
 * Sets (`ms` > 0) or removes (0) the TTL of a whole fixed or counting filter: its meta, then every
 * shard (with its feed).
 */
export async function expireShardFilter(shards: ShardGenerations, ms: number): Promise<void> {
  const { client, names } = shards
  await shards.call(ms > 0 ? client.pexpire(names.meta, ms) : client.persist(names.meta), `setTtl "${names.name}"`)
  await shards.forEachShard((shard) => shards.expireLive(shard, ms))
}
