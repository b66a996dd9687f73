/**
 * Lua for counting filters (docs/SPEC.md, section 9.11). Each script works on one shard key, so it
 * runs on the one node that holds it (standalone or Cluster) and is atomic there: every key of a
 * batch in that shard is added, removed or checked as one step, with the marker read in the same
 * step. Counter p is the nibble at bit offset 4p (`BITFIELD … u4 #p`): byte ⌊p / 2⌋, high nibble
 * for even p.
 *
 * ARGV: [1] the marker's byte offset, [2] this filter's marker, [3] the operation ('a' add, 'r'
 * remove, 't' test), [4] hashes k, then three MessagePack arrays made by `counterBatchArgs`
 * (counter-batch-args.ts): [5] runs (first byte, last byte, touched bytes in it), [6] each touched
 * byte's offset in its run, [7] each key's k counter numbers (2i − 1 and 2i: the high and low
 * nibble of touched byte i), and for adds and removes [8] each touched byte's BITFIELD offset as
 * a string ('#byte', for `u8`). Reply: one byte per key, '1' or '0' (new / removed / present).
 *
 * The script reads each run with one GETRANGE and writes the changed bytes back with BITFIELD;
 * per counter it does a few table operations.
 */
export const COUNTER_BATCH = `
local key = KEYS[1]
local at = tonumber(ARGV[1])
if redis.call('GETRANGE', key, at, at + 3) ~= ARGV[2] then return redis.error_reply('BLOOMKIT_DATA_LOST') end
local op, k = ARGV[3], tonumber(ARGV[4])
local runs, offsets, counters = cmsgpack.unpack(ARGV[5]), cmsgpack.unpack(ARGV[6]), cmsgpack.unpack(ARGV[7])
local byte = string.byte
local c, old, strings = {}, {}, {}
local i = 0
for r = 1, #runs, 3 do
  local s = redis.call('GETRANGE', key, runs[r], runs[r + 1])
  strings[#strings + 1] = s
  for _ = 1, runs[r + 2] do
    i = i + 1
    local b = byte(s, offsets[i])
    local low = b % 16
    old[i] = b
    c[2 * i - 1] = (b - low) / 16
    c[2 * i] = low
  end
end
local out = {}
local n = #counters / k
if op == 'a' then
  for key_index = 1, n do
    local new = '0'
    for j = (key_index - 1) * k + 1, key_index * k do
      local q = counters[j]
      local v = c[q]
      if v == 0 then new = '1' end
      -- Sticky: a counter at 15 stays there.
      if v < 15 then c[q] = v + 1 end
    end
    out[key_index] = new
  end
else
  for key_index = 1, n do
    local from, to = (key_index - 1) * k + 1, key_index * k
    local present = '1'
    for j = from, to do if c[counters[j]] == 0 then present = '0'; break end end
    if op == 'r' and present == '1' then
      for j = from, to do
        local q = counters[j]
        local v = c[q]
        -- Never a saturated counter (it may hold counts it lost), never below 0 (a position
        -- repeated within the key, or another key's removal, may have got there first).
        if v < 15 and v > 0 then c[q] = v - 1 end
      end
    end
    out[key_index] = present
  end
end
if op ~= 't' then
  -- Changed bytes go back by BITFIELD SET u8, 1000 at a time, with the offsets as the strings the
  -- client sent ('#byte'): no number converted to a string, and no substring made in Lua (Lua
  -- interns every string, and substrings of a mostly-zero shard collide in its string table).
  local refs = cmsgpack.unpack(ARGV[8])
  local args, m, values = {}, 0, {}
  for j = 1, i do
    local b = c[2 * j - 1] * 16 + c[2 * j]
    if b ~= old[j] then
      local v = values[b]
      if v == nil then v = tostring(b); values[b] = v end
      args[m + 1] = 'SET'; args[m + 2] = 'u8'; args[m + 3] = refs[j]; args[m + 4] = v
      m = m + 4
      if m == 4000 then redis.call('BITFIELD', key, unpack(args, 1, m)); m = 0 end
    end
  end
  if m > 0 then redis.call('BITFIELD', key, unpack(args, 1, m)) end
end
return table.concat(out)`

/**
 * Counts a shard's non-zero and saturated counters: ARGV[1] the marker's byte offset, [2] the
 * marker, [3] first byte, [4] last byte of the range. Reply: { nonZero, saturated }.
 */
export const COUNT_COUNTERS = `
local at = tonumber(ARGV[1])
if redis.call('GETRANGE', KEYS[1], at, at + 3) ~= ARGV[2] then return redis.error_reply('BLOOMKIT_DATA_LOST') end
local bytes = redis.call('GETRANGE', KEYS[1], tonumber(ARGV[3]), tonumber(ARGV[4]))
local nonzero, saturated = 0, 0
for i = 1, #bytes do
  local b = string.byte(bytes, i)
  if b ~= 0 then
    local high, low = math.floor(b / 16), b % 16
    if high ~= 0 then nonzero = nonzero + 1 end
    if low ~= 0 then nonzero = nonzero + 1 end
    if high == 15 then saturated = saturated + 1 end
    if low == 15 then saturated = saturated + 1 end
  end
end
return { nonzero, saturated }`

/**
 * Adds counters into a shard from byte ARGV[3], each sum capped at 15 (merge): ARGV[1] the
 * marker's byte offset, [2] the marker, [4] the counter bytes to add.
 */
export const ADD_COUNTERS = `
local at = tonumber(ARGV[1])
if redis.call('GETRANGE', KEYS[1], at, at + 3) ~= ARGV[2] then return redis.error_reply('BLOOMKIT_DATA_LOST') end
local from, add = tonumber(ARGV[3]), ARGV[4]
local old = redis.call('GETRANGE', KEYS[1], from, from + #add - 1)
local out = {}
for i = 1, #add do
  local a, b = string.byte(old, i), string.byte(add, i)
  local high = math.min(15, math.floor(a / 16) + math.floor(b / 16))
  local low = math.min(15, a % 16 + b % 16)
  out[i] = string.char(high * 16 + low)
end
redis.call('SETRANGE', KEYS[1], from, table.concat(out))
return 1`
