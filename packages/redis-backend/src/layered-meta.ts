import { BloomError, type LayeredOptions } from '@bloomkit/core'
import { checkPolicyKind, HASH_SCHEMES, layerPolicyOf, layoutOfScheme, type LayerEntry, type LayerPolicy } from '@bloomkit/core/store'
import { STORE_FORMAT } from './meta.js'

// The meta hash `<name>:meta` of a layered filter (docs/SPEC.md 9.8): its policy fields, the
// layer list, and the scripts that change the list.

/**
 * Appends a layer unless the list changed since the caller read it (racing growers: one wins, the
 * others get the new list back). Drops entries of windows below ARGV[3] (rotating) with their counts.
 * KEYS[1] meta; ARGV: expected version, the new entry's window/index/capacity ('' for none), min window, meta TTL ms.
 * Returns {version, layers, the new layer's id or ''}.
 */
export const GROW = `
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return redis.error_reply('BLOOMKIT_NOT_FOUND') end
if version ~= ARGV[1] then return {version, redis.call('HGET', KEYS[1], 'layers')} end
local kept = {}
local minWindow = tonumber(ARGV[3])
for entry in string.gmatch(redis.call('HGET', KEYS[1], 'layers'), '[^,]+') do
  local id, window = string.match(entry, '^(%d+)/(%d+)/')
  if tonumber(window) >= minWindow then table.insert(kept, entry) else redis.call('HDEL', KEYS[1], 'count:' .. id) end
end
local id = ''
if ARGV[2] ~= '' then
  id = tostring(redis.call('HINCRBY', KEYS[1], 'nextId', 1))
  table.insert(kept, id .. '/' .. ARGV[2])
end
local layers = table.concat(kept, ',')
version = tostring(tonumber(version) + 1)
redis.call('HSET', KEYS[1], 'layers', layers, 'version', version)
if tonumber(ARGV[4]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return {version, layers, id}
`

/**
 * Unlists the layers ARGV[1 …] (ids) with their count and ready fields, whatever else the list
 * holds now: removing given ids commutes with racing appends, so no compare-and-set is needed.
 * The version moves only when an entry was removed. KEYS[1] meta. Returns {version, layers}.
 */
export const UNLIST = `
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return redis.error_reply('BLOOMKIT_NOT_FOUND') end
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
end
return {version, layers}
`

/** Creates the meta hash from ARGV (field, value, …) unless KEYS[1] exists. Returns 1 when created. */
export const CREATE_LAYERED = `if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end redis.call('HSET', KEYS[1], unpack(ARGV)) return 1`

/** A list entry as the `layers` field writes it: `id/window/index/capacity`. */
export function entryText(entry: LayerEntry): string {
  return `${entry.id}/${entry.window}/${entry.index}/${entry.capacity}`
}

/** The `layers` field of a layered meta, read as entries (docs/SPEC.md 9.8). */
export function parseEntries(text: string): LayerEntry[] {
  if (text === '') return []
  return text.split(',').map((entry) => {
    // A list no writer could have made would send checks to the wrong layers, or none.
    if (!/^\d{1,15}\/\d{1,15}\/\d{1,15}\/\d{1,16}$/.test(entry)) {
      throw new BloomError('BLOOM_CORRUPT_STORE', `a layered filter's meta lists a layer ${JSON.stringify(entry)}, not id/window/index/capacity (docs/SPEC.md 9.8)`)
    }
    const [id, window, index, capacity] = entry.split('/').map(Number)
    return { id, window, index, capacity }
  })
}

/** The meta hash fields of a layered filter's policy. */
export function policyFields(policy: LayerPolicy): string[] {
  return [
    'format', String(STORE_FORMAT),
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
 * The policy a layered meta hash holds.
 * @throws BloomError `BLOOM_INCOMPATIBLE` (a fixed filter), `BLOOM_UNSUPPORTED_VERSION`, `BLOOM_CORRUPT_STORE`.
 */
export function policyOf(name: string, fields: Record<string, string>): LayerPolicy {
  if (fields.kind !== 'layered') {
    throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" is a fixed filter, not a layered one: open it with RedisBloomFilter.open`)
  }
  if (fields.format !== String(STORE_FORMAT)) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `filter "${name}" uses store format ${fields.format}; this release reads format ${STORE_FORMAT}`)
  }
  checkPolicyKind(fields.policy, `filter "${name}"`)
  try {
    const growth = Number(fields.growth)
    const shards = Number(fields.shards)
    return layerPolicyOf({
      capacity: Number(fields.capacity),
      errorRate: Number(fields.errorRate),
      growth: growth === 0 ? undefined : growth,
      tightening: Number(fields.tightening),
      seed: Number(fields.seed),
      layout: fields.scheme === '0' ? undefined : layoutOfScheme(fields.scheme, `filter "${name}"`),
      shards: shards === 0 ? undefined : shards,
      ...(fields.policy === 'rotating' ? { window: { seconds: Number(fields.seconds), keep: Number(fields.keep) } } : {}),
    } as LayeredOptions)
  } catch (error) {
    if (error instanceof BloomError && error.code === 'BLOOM_UNSUPPORTED_VERSION') throw error
    throw new BloomError('BLOOM_CORRUPT_STORE', `filter "${name}": its layered meta hash holds an impossible policy (${(error as Error).message})`, { cause: error })
  }
}
