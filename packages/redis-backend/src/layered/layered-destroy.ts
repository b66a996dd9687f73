// Destroying a layered filter whatever state its meta is in (docs/SPEC.md 9.8, Destroy): the
// layers' ids are read from the meta leniently, so that a damaged list still names its layers.

/**
 * The ids of the layers a layered meta names, newest first: each entry of `layers` that starts
 * with an id (whatever follows it, so a damaged entry still counts) and each `count:<id>` and
 * `ready:<id>` field; when it names none, `nextId` (the last id handed out). Destroy then goes on
 * down from the lowest while layers exist: those dropped from the list whose keys have not expired
 * yet (they expire oldest first, so the first missing one ends them).
 */
export function namedLayerIds(fields: Readonly<Record<string, string>>): number[] {
  const ids = new Set<number>()
  for (const entry of (fields.layers ?? '').split(',')) {
    const id = /^(\d{1,15})\//.exec(entry)?.[1]
    if (id !== undefined) ids.add(Number(id))
  }
  for (const field of Object.keys(fields)) {
    const id = /^(?:count|ready):(\d{1,15})$/.exec(field)?.[1]
    if (id !== undefined) ids.add(Number(id))
  }
  if (ids.size === 0 && /^[1-9]\d{0,14}$/.test(fields.nextId ?? '')) ids.add(Number(fields.nextId))
  return [...ids].sort((a, b) => b - a)
}

/**
 * Deletes the meta KEYS[1] only if its `layers` and `nextId` are still ARGV[1] and ARGV[2] (a
 * missing field as ''): a layer listed meanwhile must be destroyed first. Returns 1 when deleted,
 * 0 when the meta changed, -1 when it is gone.
 */
export const DELETE_UNCHANGED_META = `local f = redis.call('HMGET', KEYS[1], 'layers', 'nextId', 'version')
if not f[3] and redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if (f[1] or '') ~= ARGV[1] or (f[2] or '') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
return 1`
