// What destroy does with a fixed or counting filter whose meta it cannot decode (docs/SPEC.md 9.9):
// the keys must go all the same, or they would stay in Redis with nothing left to find them by.
import { callRedis } from '../errors.js'
import { isCluster, type RedisClient } from '../wire/client.js'
import { isShardKeyOf } from './key-names.js'

/** How many keys one SCAN step asks Redis to look at. */
const SCAN_COUNT = 1000

/**
 * Every shard key (live, next generation, scratch, feed) of the filter `name`, whose meta is
 * damaged: those a SCAN on every master finds, of the exact shapes
 * of a filter's key names ({@link isShardKeyOf}), so that a filter named `name:x` or a layer `name:L1` is not touched. The
 * meta's shard count is not trusted, even where it still reads: damage may have left a plausible
 * but wrong one (`4` written as `2` names other tags), and the keys it missed would stay in Redis
 * with nothing left to find them by. Slow on a large keyspace, but only destroy of a damaged filter pays it.
 */
export async function damagedFilterKeys(client: RedisClient, name: string, timeout: number): Promise<string[]> {
  const prefix = client.options.keyPrefix ?? ''
  const pattern = `${prefix}${name.replace(/[*?[\]\\]/g, '\\$&')}:*`
  const nodes = isCluster(client) ? (client as unknown as { nodes(role: string): RedisClient[] }).nodes('master') : [client]
  const found: string[] = []
  for (const node of nodes) {
    let cursor = '0'
    do {
      const [next, keys] = (await callRedis(node.callBuffer('SCAN', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT), timeout, `destroy "${name}"`)) as [Buffer, Buffer[]]
      cursor = next.toString()
      for (const raw of keys) {
        const key = raw.toString().slice(prefix.length)
        if (isShardKeyOf(name, key)) found.push(key)
      }
    } while (cursor !== '0')
  }
  return found
}
