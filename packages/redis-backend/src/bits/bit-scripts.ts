// Lua of the bits' command paths (everything but the per-bit hot path, which is plain BITFIELD):
// reading, counting, writing and ORing a shard, a batch's second live write, the debris of a write
// to a lost shard, and block reads. Each touches one key, or keys sharing a hash tag (a Cluster
// node's keys for READ_BLOCKS_ACROSS_SLOTS), so each is atomic. Shard scripts take ARGV[1] = the
// marker's byte offset and ARGV[2], ARGV[3] = the two marker values (4 bytes each) that are
// acceptable; a shard key without one of them is lost.
import { ADD_FIELD, RESET_FEED_LUA } from '../layout/feed.js'

const CHECK_MARKER = `
local at = tonumber(ARGV[1])
local marker = redis.call('GETRANGE', KEYS[1], at, at + 3)
if marker ~= ARGV[2] and marker ~= ARGV[3] then return redis.error_reply('BLOOMKIT_DATA_LOST') end
`

/** GETRANGE ARGV[4]..ARGV[5] of a marked shard. */
export const READ_SHARD = `${CHECK_MARKER}
return redis.call('GETRANGE', KEYS[1], ARGV[4], ARGV[5])`

/** BITCOUNT of the bits (not the marker) of a marked shard; ARGV[4] is the last bit byte. */
export const COUNT_SHARD = `${CHECK_MARKER}
return redis.call('BITCOUNT', KEYS[1], 0, ARGV[4])`

/**
 * With KEYS[2] (a live shard's feed, store format 2): the shard's bits are overwritten or ORed in
 * place rather than swapped, so its feed is reset in the same script (ARGV[6] the feed length,
 * ARGV[7] the reset entry's tag) and replicas load the shard again.
 */
const RESET_FEED_IF_FED = `${RESET_FEED_LUA}
if KEYS[2] then resetFeed(KEYS[2], KEYS[1], ARGV[6], ARGV[7]) end
`

/** SETRANGE ARGV[5] at byte ARGV[4] of a marked shard (resetting a feed KEYS[2], see above). */
export const WRITE_SHARD = `${CHECK_MARKER}${RESET_FEED_IF_FED}
return redis.call('SETRANGE', KEYS[1], ARGV[4], ARGV[5])`

/** ORs ARGV[5] into a marked shard from byte ARGV[4] (callers keep ARGV[5] to ≤ 64 KiB), resetting a feed KEYS[2]. */
export const OR_SHARD = `${CHECK_MARKER}${RESET_FEED_IF_FED}
local from = tonumber(ARGV[4])
local add = ARGV[5]
local old = redis.call('GETRANGE', KEYS[1], from, from + #add - 1)
local out = {}
local step = 2048
for i = 1, #add, step do
  local j = math.min(i + step - 1, #add)
  local a = { string.byte(old, i, j) }
  local b = { string.byte(add, i, j) }
  for q = 1, #b do a[q] = bit.bor(a[q] or 0, b[q]) end
  out[#out + 1] = string.char(unpack(a))
end
return redis.call('SETRANGE', KEYS[1], from, table.concat(out))`

/**
 * ORs the bits in KEYS[2] (a batch's scratch key) into the marked shard KEYS[1] with BITOP, which
 * runs over whole words in C, keeping the shard's TTL (BITOP drops it); deletes KEYS[2]. If the
 * marker is the flagged one and ARGV[4] is '1', a rebuild is running: the bits also go into the
 * next generation KEYS[3] if it is complete (marked ARGV[2]); one that is gone was abandoned.
 * Returns 0, changing nothing, when KEYS[1] is missing or not marked.
 */
export const OR_SCRATCH = `
local at = tonumber(ARGV[1])
local marker = redis.call('GETRANGE', KEYS[1], at, at + 3)
if marker ~= ARGV[2] and marker ~= ARGV[3] then
  redis.call('DEL', KEYS[2])
  return 0
end
local function orInto(key)
  local ttl = redis.call('PTTL', key)
  redis.call('BITOP', 'OR', key, key, KEYS[2])
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
end
orInto(KEYS[1])
if marker ~= ARGV[2] and ARGV[4] == '1' and redis.call('GETRANGE', KEYS[3], at, at + 3) == ARGV[2] then orInto(KEYS[3]) end
redis.call('DEL', KEYS[2])
return 1`

/**
 * Sets bits ARGV[6 …] in the marked live shard KEYS[1] and, when its marker is the flagged one
 * (ARGV[3]) and the next generation KEYS[2] is sealed (ARGV[2]), in KEYS[2] too, in one step: a
 * writer's second live write after its copy met no sealed next key (docs/SPEC.md 9.5), which may
 * find a new rebuild's flag. With KEYS[3] (the shard's feed, store format 2), appends the entry
 * ARGV[5] to it, trimmed to about ARGV[4] entries, in the same step (9.12). Returns 0, changing
 * nothing, when KEYS[1] is missing or not marked.
 */
export const SET_LIVE_AND_NEXT = `
local at = tonumber(ARGV[1])
local marker = redis.call('GETRANGE', KEYS[1], at, at + 3)
if marker ~= ARGV[2] and marker ~= ARGV[3] then return 0 end
local copy = marker == ARGV[3] and redis.call('GETRANGE', KEYS[2], at, at + 3) == ARGV[2]
if KEYS[3] then redis.call('XADD', KEYS[3], 'NOMKSTREAM', 'MAXLEN', '~', ARGV[4], '*', '${ADD_FIELD}', ARGV[5]) end
for i = 6, #ARGV do
  redis.call('SETBIT', KEYS[1], ARGV[i], 1)
  if copy then redis.call('SETBIT', KEYS[2], ARGV[i], 1) end
end
return 1`

/**
 * Deletes the debris a write to a lost shard leaves behind: a key that lacks both markers and is
 * shorter than bits and marker (a BITFIELD on a missing key creates at most the bits' bytes). A
 * key of full length without our marker is left alone: it may be the shard of a filter created
 * again under the name, which a stale instance must not destroy.
 */
export const DISCARD_UNMARKED = `
local at = tonumber(ARGV[1])
local marker = redis.call('GETRANGE', KEYS[1], at, at + 3)
if marker ~= ARGV[2] and marker ~= ARGV[3] and redis.call('STRLEN', KEYS[1]) < at + 4 then return redis.call('DEL', KEYS[1]) end
return 0`

const READ_BLOCKS_HEAD = `
local at = tonumber(ARGV[1])
local plain, other = ARGV[2], ARGV[3]
local status, out = {}, {}
local n = 0
local unpackI = struct.unpack`

/** Checks shard `key`'s marker (status[s]) and appends the blocks that `request` lists to `out`. */
const READ_SHARD_BLOCKS = `
  local marker = redis.call('GETRANGE', key, at, at + 3)
  if marker == plain then status[s] = '0'
  elseif marker == other then status[s] = '1'
  else return redis.error_reply('BLOOMKIT_DATA_LOST ' .. key) end
  for i = 1, #request, 4 do
    local offset = unpackI('>I4', request, i)
    n = n + 1
    out[n] = redis.call('GETRANGE', key, offset, offset + 63)
  end`

/**
 * Reads each requested 64-byte block of the shards KEYS[1 … n], for the blocked layout (a key's
 * bits all lie in one block), so that the client tests the bits itself. ARGV[1] is the marker's
 * byte offset, ARGV[2] the plain marker and ARGV[3] the other accepted one (flagged, for a live
 * shard); ARGV[3 + s] lists shard s's block byte offsets, 4 bytes each, big-endian. Returns one
 * string: a status byte per shard ('0' plain, '1' the other marker), then the blocks in request
 * order. A shard without either marker fails the whole call (nothing was written).
 */
export const READ_BLOCKS = `${READ_BLOCKS_HEAD}
for s = 1, #KEYS do
  local key, request = KEYS[s], ARGV[3 + s]${READ_SHARD_BLOCKS}
end
return table.concat(status) .. table.concat(out)`

/**
 * {@link READ_BLOCKS} for shards in several slots of one Cluster node (Redis ≥ 7.0): KEYS[1] is
 * the first shard (it routes the call), ARGV[4] the shard count c, ARGV[5 … 4 + c] the shard keys
 * and ARGV[5 + c … 4 + 2c] their requests. Redis refuses it if a key is not on this node (a slot
 * moved): the caller then reads shard by shard.
 */
export const READ_BLOCKS_ACROSS_SLOTS = `#!lua flags=allow-cross-slot-keys${READ_BLOCKS_HEAD}
local count = tonumber(ARGV[4])
for s = 1, count do
  local key, request = ARGV[4 + s], ARGV[4 + count + s]${READ_SHARD_BLOCKS}
end
return table.concat(status) .. table.concat(out)`
