// Destroying a stored filter by name, whatever its kind and whatever state its meta is in (docs/SPEC.md
// 9.8 Destroy, 9.9): the one home of what `RedisBloomFilter.destroy`, `LayeredRedisFilter.destroy`
// and a layered filter's dropped layers (layered/redis-layers.ts) delete.
import { BloomError } from '@bloomkit/core'
import { callRedis } from '../errors.js'
import { damagedFilterKeys } from '../layout/damaged-meta.js'
import { KeyNames, layerName, metaKey } from '../layout/key-names.js'
import { decodeMeta, metaFields, type FilterMeta } from '../layout/meta.js'
import { forEachLimited, ShardGenerations } from '../layout/shard-generations.js'
import type { RedisClient } from '../wire/client.js'
import { runScript } from '../wire/script.js'
import { DELETE_UNCHANGED_META, namedLayerIds } from '../layered/layered-destroy.js'
import { checkLayeredKind } from '../layered/layered-meta.js'
import { leftoverKeys } from './replace-parameters.js'

/** UNLINKs sent at once by a destroy. */
const CONCURRENCY = 16

/**
 * Deletes the filter `name` of any kind: a fixed or counting one by {@link destroyShardFilter}, a
 * layered one by {@link destroyLayeredFilter}. Resolves to false if there was none.
 */
export async function destroyFilter(client: RedisClient, name: string, timeout: number): Promise<boolean> {
  const fields = await readFields(client, name, timeout)
  if (Object.keys(fields).length === 0) return false
  if (fields.kind === 'layered') return destroyLayeredFilter(client, name, fields, timeout)
  return destroyShardFilter(client, name, fields, timeout)
}

/**
 * Deletes a fixed or counting filter whose meta holds `fields` (read already): its shards, next
 * generations and feeds, then its meta, and what a killed import with new parameters left beside
 * (operations/replace-parameters.ts). A damaged meta (`BLOOM_CORRUPT_STORE` to open) is destroyed
 * all the same: the shard keys a SCAN finds on every master.
 * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` (a later store format), `BLOOM_INCOMPATIBLE` (a
 *   layered meta), `BLOOM_CORRUPT_STORE` (a hash with no `format`: not a bloomkit filter), `BLOOM_STORE_UNAVAILABLE`.
 */
export async function destroyShardFilter(client: RedisClient, name: string, fields: Record<string, string>, timeout: number): Promise<true> {
  const what = `destroy "${name}"`
  const meta = decodeOrDamaged(name, fields)
  if (meta === undefined) {
    // A damaged meta: its keys go all the same, the meta last, so that a failed call can be retried.
    const keys = [...(await damagedFilterKeys(client, name, timeout)), ...leftoverKeys(name, fields)]
    await forEachLimited(keys.length, CONCURRENCY, (i) => callRedis(client.unlink(keys[i]), timeout, what))
    await callRedis(client.del(metaKey(name)), timeout, what)
    return true
  }
  const shards = new ShardGenerations(client, new KeyNames(name, meta.parameters.shards), meta.parameters, meta.epoch, timeout)
  await shards.deleteAll()
  const leftovers = leftoverKeys(name, fields)
  await forEachLimited(leftovers.length, CONCURRENCY, (i) => shards.call(client.unlink(leftovers[i]), what))
  return true
}

/**
 * Deletes the layered filter whose meta holds `fields` (read already, not empty): every layer its
 * meta names (listed, or dropped but maybe not yet expired), then the meta, unless a layer was
 * listed meanwhile (then those too). A damaged meta (its list unreadable, its check failed) is
 * destroyed all the same. A layer that cannot be destroyed fails the call with its code, and the
 * meta stays, so that destroying again finds what is left.
 * @throws BloomError `BLOOM_INCOMPATIBLE` (`fields` are not a layered meta's), a layer's error, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function destroyLayeredFilter(client: RedisClient, name: string, fields: Record<string, string>, timeout: number): Promise<true> {
  // Only its kind: a damaged policy must not keep its keys in Redis.
  checkLayeredKind(name, fields)
  for (;;) {
    const ids = namedLayerIds(fields)
    for (const id of ids) await destroyFilter(client, layerName(name, id), timeout)
    // Below the lowest named: layers dropped from the list, until the first that has expired.
    let id = (ids.at(-1) ?? 1) - 1
    while (id >= 1 && (await destroyFilter(client, layerName(name, id), timeout))) id--
    const done = Number(await runScript(client, DELETE_UNCHANGED_META, [1, metaKey(name), fields.layers ?? '', fields.nextId ?? ''], timeout, `destroy "${name}"`))
    if (done !== 0) return true
    fields = await readFields(client, name, timeout)
  }
}

/** The meta hash of `name` as field/value pairs ({} when there is none). */
async function readFields(client: RedisClient, name: string, timeout: number): Promise<Record<string, string>> {
  return metaFields(await callRedis(client.hgetall(metaKey(name)), timeout, `destroy "${name}"`))
}

/**
 * The decoded meta, or undefined when it is a filter's damaged meta (`BLOOM_CORRUPT_STORE` with its
 * `format` field there); any other refusal is thrown, a hash with no `format` (not a bloomkit filter) included.
 */
function decodeOrDamaged(name: string, fields: Record<string, string>): FilterMeta | undefined {
  try {
    return decodeMeta(name, fields)
  } catch (error) {
    if (error instanceof BloomError && error.code === 'BLOOM_CORRUPT_STORE' && fields.format !== undefined) return undefined
    throw error
  }
}
