// The script a replica's catch-ups read with (docs/SPEC.md 9.13). It reads a shard's marker in the
// same step as what it returns, so a lost shard is seen where its entries would be trusted.
import { createHash } from 'node:crypto'
import { TAG_BYTES } from '../layout/feed.js'

/** A script and its SHA1, for EVALSHA (runScript). */
export interface ReplicaScript {
  readonly body: string
  readonly sha: string
}

function script(body: string): ReplicaScript {
  return { body, sha: createHash('sha1').update(body).digest('hex') }
}

/**
 * A catch-up of n shards: `KEYS[2i − 1]` shard i's feed, `KEYS[2i]` its shard key, and, when
 * `ARGV[4]` (f) is above 0, `KEYS[2n + 1]` the meta hash. `ARGV[1]` the marker's offset,
 * `ARGV[2]` the most entries to return per shard, `ARGV[3]` n, `ARGV[5 … 4 + f]` the meta fields
 * to read, then per shard the position's entry ID and its tag. Per shard it replies
 * `{marker}` when the feed no longer holds an entry with that ID and tag (reset, trimmed, lost),
 * else `{marker, entries}`, the entries after the position (XRANGE's reply); then the meta's
 * fields (HMGET). The position's own entry is compared here, not sent: an add's entry holds up to
 * thousands of keys, and a barrier reads every touched shard's.
 */
export const CATCH_UP = script(catchUpBody('KEYS'))

/**
 * {@link CATCH_UP} for several shards of one Cluster node, whose keys are in different slots: the
 * names go in ARGV instead (`ARGV[5 + f …]` per shard its feed, its shard key, the position's ID
 * and tag; no meta, f = 0), and `KEYS[1]` is the first shard's feed, once more, only so that the
 * client routes the call to that shard's node. Redis runs it only if every key it touches is
 * served by that node (Redis 7's allow-cross-slot-keys: a key elsewhere, or in a slot migrating
 * away, is an error, which the caller answers by reading those shards one script each).
 */
export const CATCH_UP_ON_NODE = script(`#!lua flags=no-writes,allow-cross-slot-keys
${catchUpBody('ARGV')}`)

/** The body of the catch-up scripts: shard i's feed and shard key from KEYS (2i − 1, 2i) or ARGV (before its position). */
function catchUpBody(names: 'KEYS' | 'ARGV'): string {
  const fromKeys = names === 'KEYS'
  return `
local at = tonumber(ARGV[1])
local count = ARGV[2]
local n = tonumber(ARGV[3])
local f = tonumber(ARGV[4])
local out = {}
local arg = 5 + f
for i = 1, n do
  ${fromKeys ? 'local feed = KEYS[2 * i - 1]' : 'local feed = ARGV[arg]'}
  local marker = redis.call('GETRANGE', ${fromKeys ? 'KEYS[2 * i]' : 'ARGV[arg + 1]'}, at, at + 3)
  ${fromKeys ? '' : 'arg = arg + 2'}
  local id = ARGV[arg]
  local tag = ARGV[arg + 1]
  arg = arg + 2
  local here = redis.call('XRANGE', feed, id, id)[1]
  if here ~= nil and string.sub(here[2][2], 1, ${TAG_BYTES}) == tag then
    out[i] = {marker, redis.call('XRANGE', feed, '(' .. id, '+', 'COUNT', count)}
  else
    out[i] = {marker}
  end
end
if f > 0 then out[n + 1] = redis.call('HMGET', KEYS[2 * n + 1], unpack(ARGV, 5, 4 + f)) end
return out
`
}
