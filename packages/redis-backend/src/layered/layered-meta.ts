import { createHash } from 'node:crypto'
import { BloomError, type LayeredOptions } from '@bloomkit/core'
import { type LayerEntry, type LayerPolicy, hashSchemes, layerPolicies } from '@bloomkit/core/store'
import { CORRUPT_REPLY, NOT_FOUND_REPLY } from '../errors.js'
import { FEED_STORE_FORMAT } from '../layout/feed.js'
import { formatOf, metaCheck, STORE_FORMAT, storedFeedLength } from '../layout/meta.js'
import { badField, isCanonicalInteger, storedDouble, storedInteger } from '../layout/stored-numbers.js'

const { HASH_SCHEMES, layoutOfScheme } = hashSchemes
const { checkPolicyKind, layerPolicyOf } = layerPolicies

// The meta hash `<name>:meta` of a layered filter (docs/SPEC.md 9.8): its policy fields, the
// layer list, its `check`, and the scripts that change the list.

/**
 * The fields a layered meta's `check` covers (docs/SPEC.md 9.8), in order: everything that decides
 * which layers a key is looked for in and how (policy, seed, layout, the list and its version, the
 * next id). Counts and `ready:<id>` change by HINCRBY/HSET outside any script and are not covered.
 */
export const LAYERED_CHECKED_FIELDS = ['format', 'kind', 'policy', 'capacity', 'errorRate', 'growth', 'tightening', 'seconds', 'keep', 'seed', 'scheme', 'shards', 'layers', 'version', 'nextId'] as const

/** The `check` of a layered meta's fields: the fixed meta's check (meta.ts) over {@link LAYERED_CHECKED_FIELDS}, a missing field read as ''. */
export function layeredCheck(fields: Readonly<Record<string, string | undefined>>): string {
  return metaCheck(LAYERED_CHECKED_FIELDS.map((field) => fields[field] ?? ''))
}

/** A flat [field, value, …] list of a whole new layered meta, with its `check` appended. */
export function withLayeredCheck(list: readonly string[]): string[] {
  const fields: Record<string, string> = {}
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]] = list[i + 1]
  return [...list, 'check', layeredCheck(fields)]
}

/**
 * Refuses a layered meta whose `check` does not match its fields (edited outside bloomkit). A meta
 * without `check` was written by a release before it existed, and is accepted as it is.
 * @throws BloomError `BLOOM_CORRUPT_STORE`.
 */
export function verifyLayeredCheck(name: string, fields: Readonly<Record<string, string | undefined>>): void {
  if (fields.check === undefined || fields.check === null) return
  const computed = layeredCheck(fields)
  if (computed === fields.check) return
  throw new BloomError(
    'BLOOM_CORRUPT_STORE',
    `filter "${name}": its layered meta hash was changed outside bloomkit: its fields ${LAYERED_CHECKED_FIELDS.join(', ')} no longer match its check field ` +
      `(${fields.check}, computed ${computed}). Restore the original values, or rebuild the filter under a new name from its source`,
  )
}

/**
 * Lua for the scripts that change a layered meta: `verify(key)` raises `${CORRUPT_REPLY}` when
 * the stored `check` does not match the fields and returns whether there is one (none: a meta of
 * an earlier release, left without); `reseal(key)` stores the check of the fields as they are now.
 * CRC-32 as section 6 of docs/SPEC.md (reflected 0xEDB88320), 8 lowercase hex digits, as metaCheck.
 */
const LUA_CHECK = `
local function crc32hex(s)
  local bxor, band, rshift = bit.bxor, bit.band, bit.rshift
  local table32 = {}
  for n = 0, 255 do
    local c = n
    for _ = 1, 8 do
      if band(c, 1) == 1 then c = bxor(0xedb88320, rshift(c, 1)) else c = rshift(c, 1) end
    end
    table32[n] = c
  end
  local c = -1
  for i = 1, #s do c = bxor(table32[band(bxor(c, string.byte(s, i)), 255)], rshift(c, 8)) end
  return bit.tohex(bit.bnot(c), 8)
end
local function checkOf(key)
  local values = redis.call('HMGET', key, ${LAYERED_CHECKED_FIELDS.map((field) => `'${field}'`).join(', ')})
  for i = 1, ${LAYERED_CHECKED_FIELDS.length} do if not values[i] then values[i] = '' end end
  return crc32hex(table.concat(values, '|'))
end
local function verify(key)
  local stored = redis.call('HGET', key, 'check')
  if not stored then return false end
  if stored ~= checkOf(key) then return redis.error_reply('${CORRUPT_REPLY}: the layered meta no longer matches its check field') end
  return true
end
local function reseal(key) redis.call('HSET', key, 'check', checkOf(key)) end
`

/**
 * Appends a layer unless the list changed since the caller read it (racing growers: one wins, the
 * others get the new list back). Drops entries of windows below ARGV[3] (rotating) with their
 * count and ready fields.
 * Refuses a meta whose `check` does not match (`BLOOMKIT_CORRUPT_STORE`), and keeps it matching.
 * KEYS[1] meta; ARGV: expected version, the new entry's window/index/capacity ('' for none), min window, meta TTL ms.
 * Returns {version, layers, the new layer's id or ''}.
 */
export const GROW = `${LUA_CHECK}
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return redis.error_reply('${NOT_FOUND_REPLY}') end
local sealed = verify(KEYS[1])
if type(sealed) == 'table' then return sealed end
if version ~= ARGV[1] then return {version, redis.call('HGET', KEYS[1], 'layers')} end
local kept = {}
local minWindow = tonumber(ARGV[3])
for entry in string.gmatch(redis.call('HGET', KEYS[1], 'layers'), '[^,]+') do
  local id, window = string.match(entry, '^(%d+)/(%d+)/')
  if tonumber(window) >= minWindow then table.insert(kept, entry) else redis.call('HDEL', KEYS[1], 'count:' .. id, 'ready:' .. id) end
end
local id = ''
if ARGV[2] ~= '' then
  id = tostring(redis.call('HINCRBY', KEYS[1], 'nextId', 1))
  table.insert(kept, id .. '/' .. ARGV[2])
end
local layers = table.concat(kept, ',')
version = tostring(tonumber(version) + 1)
redis.call('HSET', KEYS[1], 'layers', layers, 'version', version)
if sealed then reseal(KEYS[1]) end
if tonumber(ARGV[4]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {version, layers, id}
`

/**
 * Unlists the layers ARGV[1 …] (ids) with their count and ready fields, whatever else the list
 * holds now: removing given ids commutes with racing appends, so no compare-and-set is needed.
 * The version moves only when an entry was removed; `check` is verified and kept, as by GROW.
 * KEYS[1] meta. Returns {version, layers}.
 */
export const UNLIST = `${LUA_CHECK}
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return redis.error_reply('${NOT_FOUND_REPLY}') end
local sealed = verify(KEYS[1])
if type(sealed) == 'table' then return sealed end
local gone = {}
for i = 1, #ARGV do gone[ARGV[i]] = true end
local kept, removed = {}, false
for entry in string.gmatch(redis.call('HGET', KEYS[1], 'layers'), '[^,]+') do
  local id = string.match(entry, '^(%d+)/')
  if gone[id] then
    removed = true
    redis.call('HDEL', KEYS[1], 'count:' .. id, 'ready:' .. id)
  else
    table.insert(kept, entry)
  end
end
local layers = table.concat(kept, ',')
if removed then
  version = tostring(tonumber(version) + 1)
  redis.call('HSET', KEYS[1], 'layers', layers, 'version', version)
  if sealed then reseal(KEYS[1]) end
end
return {version, layers}
`

/** Lua: the list's version (an error when the meta is gone), and whether layer ARGV[1] is listed (its count field removed if not). */
const LISTED_COUNT = `
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return redis.error_reply('${NOT_FOUND_REPLY}') end
local field = 'count:' .. ARGV[1]
if not string.find(',' .. (redis.call('HGET', KEYS[1], 'layers') or '') .. ',', ',' .. ARGV[1] .. '/', 1, true) then
  redis.call('HDEL', KEYS[1], field)
  return {version, ''}
end
`
const SETTLE_BODY = `${LISTED_COUNT}
return {version, tostring(redis.call('HINCRBY', KEYS[1], field, ARGV[2]))}`
const RESERVE_BODY = `${LISTED_COUNT}
local want, capacity = tonumber(ARGV[2]), tonumber(ARGV[3])
local total = redis.call('HINCRBY', KEYS[1], field, want)
local granted = math.max(0, math.min(want, capacity - (total - want)))
if granted == 0 then total = redis.call('HINCRBY', KEYS[1], field, -want) end
return {version, tostring(total), tostring(granted)}`

/**
 * Reserves room for ARGV[2] keys in layer ARGV[1] of capacity ARGV[3] (docs/SPEC.md 9.8, adding
 * step 5: HINCRBY, given back at once when racing writers filled it), reading the list's version
 * in the same step. A layer no longer listed gets nothing.
 * KEYS[1] meta. Returns {version, the count after, granted}, or {version, ''} when not listed.
 */
export const RESERVE = { body: RESERVE_BODY, sha: createHash('sha1').update(RESERVE_BODY).digest('hex') }

/**
 * Adds ARGV[2] to `count:<ARGV[1]>` of a listed layer and reads the list's version in the same
 * step, so that a writer learns whether the list moved while it wrote (docs/SPEC.md 9.8, adding
 * step 7). A layer no longer listed is not counted, and a count its reservation left is removed.
 * KEYS[1] meta. Returns {version, the new count or '' when the layer is not listed}.
 */
export const SETTLE = { body: SETTLE_BODY, sha: createHash('sha1').update(SETTLE_BODY).digest('hex') }

/** Creates the meta hash from ARGV (field, value, …) unless KEYS[1] exists. Returns 1 when created. */
export const CREATE_LAYERED = `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end redis.call('HSET', KEYS[1], unpack(ARGV)) return 1`

/** A list entry as the `layers` field writes it: `id/window/index/capacity`. */
export function entryText(entry: LayerEntry): string {
  return `${entry.id}/${entry.window}/${entry.index}/${entry.capacity}`
}

/**
 * The `layers` field of a layered meta, read as entries (docs/SPEC.md 9.8): each entry four
 * canonical decimals `id/window/index/capacity`, id and capacity at least 1, no id twice.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a list no writer could have made: it would send
 *   checks to the wrong layers, or none.
 */
export function parseEntries(text: string): LayerEntry[] {
  if (text === '') return []
  const ids = new Set<number>()
  return text.split(',').map((entry) => {
    const parts = entry.split('/')
    const [id, window, index, capacity] = parts.map(Number)
    if (parts.length !== 4 || !parts.every(isCanonicalInteger) || id < 1 || capacity < 1 || ids.has(id)) {
      throw new BloomError(
        'BLOOM_CORRUPT_STORE',
        `a layered filter's meta lists a layer ${JSON.stringify(entry)}, not id/window/index/capacity in decimal without leading zeros, with a new id and a capacity of at least 1 (docs/SPEC.md 9.8)`,
      )
    }
    ids.add(id)
    return { id, window, index, capacity }
  })
}

/**
 * The meta hash fields of a layered filter's policy, and with `feedLength` (a filter whose layers
 * have feeds, docs/SPEC.md 9.12) format 2 and that field.
 */
export function policyFields(policy: LayerPolicy, feedLength = 0): string[] {
  return [
    ...(feedLength > 0 ? ['feedLength', String(feedLength)] : []),
    'format', String(formatOf(feedLength)),
    'kind', 'layered',
    'policy', policy.kind,
    'capacity', String(policy.capacity),
    'errorRate', String(policy.errorRate),
    'growth', String(policy.growth),
    'tightening', String(policy.tightening),
    'seconds', String(policy.seconds),
    'keep', String(policy.keep),
    'seed', String(policy.seed),
    'scheme', policy.layout === undefined ? '0' : String(HASH_SCHEMES[policy.layout]),
    'shards', String(policy.shards ?? 0),
  ]
}

/**
 * Refuses a meta hash that is not a layered filter's of this format (docs/SPEC.md 9.8, open step
 * 2): before its `check` is verified, since another kind or format may have another check.
 * @throws BloomError `BLOOM_CORRUPT_STORE` (no `format`: not a bloomkit filter),
 *   `BLOOM_INCOMPATIBLE` (a fixed or counting filter), `BLOOM_UNSUPPORTED_VERSION` (a later kind or format).
 */
export function checkLayeredKind(name: string, fields: Readonly<Record<string, string | undefined>>): void {
  if (fields.format === undefined) throw new BloomError('BLOOM_CORRUPT_STORE', `filter "${name}": its meta hash has no "format" field: not a bloomkit filter`)
  if (fields.kind === undefined || fields.kind === 'counting') {
    throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" is a ${fields.kind === undefined ? 'fixed' : 'counting'} filter, not a layered one: open it with RedisBloomFilter.open`)
  }
  if (fields.kind !== 'layered') {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `filter "${name}" is of kind ${JSON.stringify(fields.kind)}; this release reads plain, counting and layered filters`)
  }
  if (fields.format !== String(STORE_FORMAT) && fields.format !== String(FEED_STORE_FORMAT)) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `filter "${name}" uses store format ${fields.format}; this release reads formats ${STORE_FORMAT} and ${FEED_STORE_FORMAT} (with feeds)`)
  }
}

/**
 * The `feedLength` of a layered meta of format 2 (its layers have feeds, docs/SPEC.md 9.12), 0 for
 * format 1. The caller checked the kind and format.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a format-2 meta without a valid `feedLength`.
 */
export function layeredFeedLength(name: string, fields: Readonly<Record<string, string | undefined>>): number {
  return fields.format === String(FEED_STORE_FORMAT) ? storedFeedLength(`filter "${name}"`, fields.feedLength) : 0
}

/**
 * The policy a layered meta hash holds, read strictly (docs/SPEC.md 9.8, open step 4): a known
 * `policy`; every number canonical; `scheme` 0 or known; the policy section 8 accepts, with
 * `seconds` and `keep` 0 when scalable. The caller verifies `check` first.
 * @throws BloomError `BLOOM_INCOMPATIBLE` (a fixed filter), `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_CORRUPT_STORE`.
 */
export function policyOf(name: string, fields: Record<string, string>): LayerPolicy {
  checkLayeredKind(name, fields)
  const what = `filter "${name}"`
  const kind = checkPolicyKind(fields.policy, what)
  const [capacity, growth, seconds, keep, seed, scheme, shards] = (['capacity', 'growth', 'seconds', 'keep', 'seed', 'scheme', 'shards'] as const).map((field) =>
    storedInteger(what, field, fields[field]),
  )
  const errorRate = storedDouble(what, 'errorRate', fields.errorRate)
  const tightening = storedDouble(what, 'tightening', fields.tightening)
  const layout = scheme === 0 ? undefined : layoutOfScheme(scheme, what)
  // A scalable filter has no window: a reader that took one from these fields would check other layers.
  if (kind === 'scalable' && seconds !== 0) throw badField(what, 'seconds', fields.seconds, '0 for a scalable filter')
  if (kind === 'scalable' && keep !== 0) throw badField(what, 'keep', fields.keep, '0 for a scalable filter')
  try {
    return layerPolicyOf({
      capacity,
      errorRate,
      growth: growth === 0 ? undefined : growth,
      tightening,
      seed,
      layout,
      shards: shards === 0 ? undefined : shards,
      ...(kind === 'rotating' ? { window: { seconds, keep } } : {}),
    } as LayeredOptions)
  } catch (error) {
    throw new BloomError('BLOOM_CORRUPT_STORE', `${what}: its layered meta hash holds an impossible policy (${(error as Error).message})`, { cause: error })
  }
}
