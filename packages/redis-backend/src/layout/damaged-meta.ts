// What destroy does with a fixed or counting filter whose meta it cannot decode (docs/SPEC.md 9.9):
// the keys must go all the same, or they would stay in Redis with nothing left to find them by.
import { MAX_SHARDS } from '@bloomkit/core'
import { callRedis } from '../errors.js'
import { isCluster, type RedisClient } from '../wire/client.js'
import { KeyNames } from './key-names.js'

/** How many keys one SCAN step asks Redis to look at. */
const SCAN_COUNT = 1000

/**
 * The shard count a damaged meta still tells, read leniently (any decimal spelling, "07" or "+6",
 * that a strict reader refuses): undefined when even that is unreadable or out of range.
 */
export function looseShardCount(fields: Record<string, string>): number | undefined {
  const text = fields.shards
  if (text === undefined || !/^\s*\+?\d{1,6}\s*$/.test(text)) return undefined
  const shards = Number(text)
  return shards >= 1 && shards <= MAX_SHARDS ? shards : undefined
}

/**
 * The shard keys (live, next generation, scratch, feed) of the filter `name` that exist, found by
 * SCAN on every master when the meta no longer says how many shards there are. Only names of the
 * exact shapes of {@link KeyNames}: a filter named `name:x` or a layer `name:L1` is not touched.
 */
async function scanShardKeys(client: RedisClient, name: string, timeout: number): Promise<string[]> {
  const prefix = client.options.keyPrefix ?? ''
  const pattern = `${prefix}${name.replace(/[*?[\]\\]/g, '\\$&')}:*`
  const shape = /^\d{1,5}:(?:next:|or:|feed:)?\{[0-9a-z]+\}$/
  const nodes = isCluster(client) ? (client as unknown as { nodes(role: string): RedisClient[] }).nodes('master') : [client]
  const found: string[] = []
  for (const node of nodes) {
    let cursor = '0'
    do {
      const [next, keys] = (await callRedis(node.callBuffer('SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT), timeout, `destroy "${name}"`)) as [Buffer, Buffer[]]
      cursor = next.toString()
      for (const raw of keys) {
        const key = raw.toString().slice(prefix.length)
        if (shape.test(key.slice(name.length + 1))) found.push(key)
      }
    } while (cursor !== '0')
  }
  return found
}

/**
 * Every shard key of a filter whose meta is damaged: those its (loosely read) shard count names,
 * else those a SCAN finds. Slow on a large keyspace, but only destroy of a damaged filter pays it.
 */
export async function damagedFilterKeys(client: RedisClient, name: string, fields: Record<string, string>, timeout: number): Promise<string[]> {
  const shards = looseShardCount(fields)
  if (shards === undefined) return scanShardKeys(client, name, timeout)
  const names = new KeyNames(name, shards)
  const keys: string[] = []
  for (let shard = 0; shard < shards; shard++) keys.push(names.shard(shard), names.nextShard(shard), names.scratch(shard), names.feed(shard))
  return keys
}
