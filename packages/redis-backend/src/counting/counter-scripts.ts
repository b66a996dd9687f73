/**
 * Lua for counting filters (docs/SPEC.md, section 9.11). Each script works on one shard key, so it
 * runs on the one node that holds it (standalone or Cluster) and is atomic there: every key of a
 * batch in that shard is added, removed or checked as one step, with the marker read in the same
 * step. Counter p is the nibble at bit offset 4p (`BITFIELD … u4 #p`): byte ⌊p / 2⌋, high nibble
 * for even p.
 *
 * ARGV: [1] the marker's byte offset, [2] this filter's marker, [3] the operation ('a' add, 'r'
 * remove, 't' test), [4] hashes k, then three MessagePack arrays made by `counterBatchArgs`
 * (counter-batch-args.ts): [5] runs (first byte, last byte, touched bytes in it; a run starts and
 * ends on a touched byte), [6] each touched byte's offset in its run, [7] each key's k counters:
 * `i` for the high nibble of touched byte i (1-based), `−i` for its low nibble. Reply: one byte
 * per key, '1' or '0' (new / removed / present).
 *
 * Its cost is Lua's and `redis.call`'s (measured: benchmarks/README.md, "Counting filters in
 * Redis"), so it works on whole bytes (no nibble tables), reads each run with one GETRANGE and
 * writes each run whose bytes changed back with one SETRANGE of the run, built from the string it
 * read with the new bytes put in: about two calls per run of nearby bytes, where a `BITFIELD SET
 * u8` per changed byte converted four arguments per byte and answered each.
 */
export const COUNTER_BATCH = `
local key = KEYS[1]
local at = tonumber(ARGV[1])
if redis.call('GETRANGE', key, at, at + 3) ~= ARGV[2] then return redis.error_reply('BLOOMKIT_DATA_LOST') end
local op, k = ARGV[3], tonumber(ARGV[4])
local runs, offsets, counters = cmsgpack.unpack(ARGV[5]), cmsgpack.unpack(ARGV[6]), cmsgpack.unpack(ARGV[7])
local byte = string.byte
local b, old, strings = {}, {}, {}
local i = 0
for r = 1, #runs, 3 do
  local s = redis.call('GETRANGE', key, runs[r], runs[r + 1])
  strings[#strings + 1] = s
  for _ = 1, runs[r + 2] do
    i = i + 1
    local x = byte(s, offsets[i])
    b[i] = x
    old[i] = x
  end
end
local out = {}
local n = #counters / k
if op == 'a' then
  for key_index = 1, n do
    local new = '0'
    for j = (key_index - 1) * k + 1, key_index * k do
      local q = counters[j]
      -- Sticky: a counter at 15 stays there.
      if q > 0 then
        local v = b[q]
        if v < 16 then new = '1' end
        if v < 240 then b[q] = v + 16 end
      else
        q = -q
        local v = b[q]
        local low = v % 16
        if low == 0 then new = '1' end
        if low ~= 15 then b[q] = v + 1 end
      end
    end
    out[key_index] = new
  end
else
  for key_index = 1, n do
    local from, to = (key_index - 1) * k + 1, key_index * k
    local present = '1'
    for j = from, to do
      local q = counters[j]
      if q > 0 then
        if b[q] < 16 then present = '0'; break end
      elseif b[-q] % 16 == 0 then present = '0'; break end
    end
    if op == 'r' and present == '1' then
      -- Never a saturated counter (it may hold counts it lost), never below 0 (a position
      -- repeated within the key, or another key's removal, may have got there first).
      for j = from, to do
        local q = counters[j]
        if q > 0 then
          local v = b[q]
          if v >= 16 and v < 240 then b[q] = v - 16 end
        else
          q = -q
          local v = b[q]
          local low = v % 16
          if low ~= 0 and low ~= 15 then b[q] = v - 1 end
        end
      end
    end
    out[key_index] = present
  end
end
if op ~= 't' then
  -- A run whose bytes changed goes back whole by one SETRANGE: the bytes between its touched ones
  -- as read above (substrings of the run), the touched ones as they are now.
  local sub, char, concat = string.sub, string.char, table.concat
  local pieces = {}
  local j = 0
  for r = 1, #runs, 3 do
    local count = runs[r + 2]
    local changed = false
    for t = j + 1, j + count do if b[t] ~= old[t] then changed = true; break end end
    if changed then
      local s = strings[(r + 2) / 3]
      local np, next = 0, 1
      for t = j + 1, j + count do
        local o = offsets[t]
        if o > next then np = np + 1; pieces[np] = sub(s, next, o - 1) end
        np = np + 1
        pieces[np] = char(b[t])
        next = o + 1
      end
      redis.call('SETRANGE', key, runs[r], concat(pieces, '', 1, np))
    end
    j = j + count
  end
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
