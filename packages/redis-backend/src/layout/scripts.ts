// The layout's Lua (docs/SPEC.md 9): a shard's marker, its swap, and the meta hash's creation and
// lock. Each touches one key, or keys sharing a hash tag, so each is atomic in standalone Redis and
// in a Cluster. Shard scripts take ARGV[1] = the marker's byte offset and ARGV[2], ARGV[3] = the
// two marker values (4 bytes each) that are acceptable; a shard key without one of them is lost.
import { RESET_FEED_LUA } from './feed.js'

/** Replaces the marker (ARGV[2] or ARGV[3]) with ARGV[4]; 0 when the key is missing or not marked. */
export const SET_MARKER = `
local at = tonumber(ARGV[1])
local marker = redis.call('GETRANGE', KEYS[1], at, at + 3)
if marker ~= ARGV[2] and marker ~= ARGV[3] then return 0 end
redis.call('SETRANGE', KEYS[1], at, ARGV[4])
return 1`

/**
 * Moves the next generation of a shard (KEYS[1]) over the live one (KEYS[2]) in one step, after
 * checking it is complete (marker ARGV[2] at ARGV[1]). Keeps the live key's remaining TTL, or
 * uses ARGV[3] ms (the filter's) when the live key is gone; ARGV[3] = 0 means none. With KEYS[3]
 * (the shard's feed, store format 2), resets the feed in the same step (ARGV[4] the feed length,
 * ARGV[5] the reset entry's tag), with the shard's TTL.
 */
export const SWAP_SHARD = `${RESET_FEED_LUA}
local at = tonumber(ARGV[1])
if redis.call('GETRANGE', KEYS[1], at, at + 3) ~= ARGV[2] then return redis.error_reply('BLOOMKIT_DATA_LOST next generation incomplete') end
local ttl = redis.call('PTTL', KEYS[2])
redis.call('RENAME', KEYS[1], KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl)
elseif tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
if KEYS[3] then resetFeed(KEYS[3], KEYS[2], ARGV[4], ARGV[5]) end
return 1`

/**
 * Creates the meta hash from ARGV (field, value, …) unless it exists: returns {1} when created,
 * else {0, field, value, …} of the stored one. Racing creators thus agree on one set of parameters.
 */
export const CREATE_META = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  local stored = redis.call('HGETALL', KEYS[1])
  table.insert(stored, 1, 0)
  return stored
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return {1}`

/**
 * Takes the filter's lock for a create/import/rebuild/clear: ARGV[1] epoch, ARGV[2] the new state,
 * ARGV[3] a token, ARGV[4] '1' to take over whatever holds it. Returns 'ok', 'missing', 'replaced'
 * (another filter now has the name) or the state that holds it.
 */
export const LOCK_META = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 'replaced' end
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'ready' and ARGV[4] ~= '1' then return state end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'token', ARGV[3])
return 'ok'`

/** Releases the lock held with token ARGV[1], bumping the generation when ARGV[2] is '1'. */
export const UNLOCK_META = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'ready', 'token', '')
if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], 'generation', 1) end
return 1`

/** Deletes the meta hash if its lock is held with token ARGV[1] (a create or import that failed). */
export const DROP_META = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`
