import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkParameters, crc32, formatParameters, adoptsStored, seedNote, hashSchemes } from '@bloomkit/core/store'
import { callRedis } from './errors.js'
import { FEED_STORE_FORMAT, MAX_FEED_LENGTH } from './feed.js'
import { badField, storedInteger } from './stored-numbers.js'
import type { ShardGenerations } from './generations.js'
import type { RedisClient } from './wire/client.js'
import { CREATE_META, DROP_META, LOCK_META, UNLOCK_META } from './scripts.js'

const { schemeOf } = hashSchemes

/**
 * Version of the stored format in Redis (meta fields, key names, shard marker); bumped on any
 * change. A filter with a feed has format 2 ({@link FEED_STORE_FORMAT}, docs/SPEC.md 9.12).
 */
export const STORE_FORMAT = 1

/**
 * What holds the filter's lock: `creating` and `importing` (a new name: not usable yet, `open`
 * waits), `rebuilding`, `replacing` (an import over an existing filter) and `clearing` (usable
 * meanwhile), or nothing: `ready`.
 */
export type FilterState = 'creating' | 'importing' | 'rebuilding' | 'replacing' | 'clearing' | 'ready'

/** The meta hash of a filter, decoded. */
export interface FilterMeta {
  readonly parameters: FilterParameters
  /** Random, 1 to 2^31 − 1; shard markers hold epoch × 2 (+ 1 while a rebuild copies writes). */
  readonly epoch: number
  /** 1 at create, + 1 per rebuild or import that replaced the bits. */
  readonly generation: number
  readonly state: FilterState
  /** Whether it is a counting filter (meta field `kind` = `counting`, docs/SPEC.md section 9.11). */
  readonly counting?: boolean
  /**
   * For a filter with a feed (store format 2, docs/SPEC.md 9.12): the entries each shard's feed
   * keeps at least. Absent for a filter without one.
   */
  readonly feedLength?: number
}

/** The meta fields that fix where and how keys are stored; `check` covers them, and every batch compares them. */
export const CHECKED_FIELDS = ['format', 'scheme', 'seed', 'bits', 'hashes', 'shards', 'epoch'] as const

/**
 * The checked fields' values for a filter, in {@link CHECKED_FIELDS} order.
 * @param format 1, or 2 for a filter with a feed.
 */
export function checkedValues(parameters: FilterParameters, epoch: number, format: number = STORE_FORMAT): string[] {
  return [String(format), String(parameters.scheme), String(parameters.seed), String(parameters.bits), String(parameters.hashes), String(parameters.shards), String(epoch)]
}

/** The `check` field: CRC-32 (8 hex digits) of the checked fields' values joined by `|`. */
export function metaCheck(values: readonly string[]): string {
  return crc32(new TextEncoder().encode(values.join('|'))).toString(16).padStart(8, '0')
}

/**
 * The meta hash's fields for a new filter, as ioredis arguments (field, value, …).
 * @param feedLength For a filter with a feed (format 2), its `feedLength`; 0 for none (format 1).
 */
export function encodeMeta(parameters: FilterParameters, epoch: number, state: FilterState, token: string, feedLength = 0): string[] {
  const values = checkedValues(parameters, epoch, formatOf(feedLength))
  return [
    ...CHECKED_FIELDS.flatMap((field, i) => [field, values[i]]),
    'check', metaCheck(values),
    'generation', '1',
    'state', state,
    'token', token,
    'created', String(Date.now()),
    ...(feedLength > 0 ? ['feedLength', String(feedLength)] : []),
  ]
}

/** The store format of a filter whose feed keeps `feedLength` entries (0: no feed). */
export function formatOf(feedLength: number): number {
  return feedLength > 0 ? FEED_STORE_FORMAT : STORE_FORMAT
}

/** Fields from a flat [field, value, …] list (HGETALL inside Lua) or ioredis's object form. */
export function metaFields(raw: unknown): Record<string, string> {
  if (Array.isArray(raw)) {
    const fields: Record<string, string> = {}
    for (let i = 0; i + 1 < raw.length; i += 2) fields[String(raw[i])] = String(raw[i + 1])
    return fields
  }
  if (raw instanceof Map) return Object.fromEntries([...raw].map(([k, v]) => [String(k), String(v)]))
  return (raw ?? {}) as Record<string, string>
}

/** The kinds a fixed filter's meta may name in `kind` (none: a plain filter); `layered` is refused as another kind of filter. */
const FIXED_KINDS: ReadonlySet<string | undefined> = new Set([undefined, 'counting'])

/** What holds the lock, as `state` names it (docs/SPEC.md 9.3). */
const STATES: readonly FilterState[] = ['creating', 'importing', 'rebuilding', 'replacing', 'clearing', 'ready']

/**
 * Decodes and checks a meta hash, in the order of docs/SPEC.md 9.4's open steps 2–4.
 * @throws BloomError `BLOOM_INCOMPATIBLE` for a layered filter's meta, `BLOOM_UNSUPPORTED_VERSION`
 *   for a later format, kind or hash scheme, `BLOOM_CORRUPT_STORE` for a hash that is not a
 *   bloomkit filter's (a field no writer writes so: a number in another form, say `07` or `+6`).
 */
export function decodeMeta(name: string, fields: Record<string, string>): FilterMeta {
  const what = `filter "${name}"`
  const corrupt = (why: string, cause?: unknown) =>
    new BloomError('BLOOM_CORRUPT_STORE', `${what}: its meta hash ${why}`, cause === undefined ? undefined : { cause })
  if (fields.format === undefined) throw corrupt('has no "format" field: not a bloomkit filter')
  if (fields.kind === 'layered') throw new BloomError('BLOOM_INCOMPATIBLE', `${what} is a layered filter: open it with LayeredRedisFilter.open`)
  const fed = fields.format === String(FEED_STORE_FORMAT)
  // Format 2 is format 1 with a feed (docs/SPEC.md 9.12), defined for plain filters only.
  if ((fields.format !== String(STORE_FORMAT) && !fed) || (fed && fields.kind === 'counting')) {
    throw new BloomError(
      'BLOOM_UNSUPPORTED_VERSION',
      `${what} uses store format ${fields.format}${fields.kind === 'counting' ? ' for a counting filter' : ''}; this release reads formats ${STORE_FORMAT} and ${FEED_STORE_FORMAT} (with a feed; plain filters only)`,
    )
  }
  if (!FIXED_KINDS.has(fields.kind)) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${what} is of kind ${JSON.stringify(fields.kind)}; this release reads plain, counting and layered filters`)
  }
  if (fields.check !== undefined) {
    // Filters created before the check field existed have none; every one since has.
    const stored = metaCheck(CHECKED_FIELDS.map((field) => fields[field] ?? ''))
    if (stored !== fields.check) {
      throw corrupt(
        `was changed outside bloomkit: its fields ${CHECKED_FIELDS.join(', ')} no longer match its check field (${fields.check}, computed ${stored}). ` +
          'Restore the original values, or rebuild the filter under a new name from its source',
      )
    }
  }
  // Numbers first, as written (a later release's scheme is still a decimal number); then what they say.
  const [scheme, seed, bits, hashes, shards, epoch, generation] = (['scheme', 'seed', 'bits', 'hashes', 'shards', 'epoch', 'generation'] as const).map((field) =>
    storedInteger(what, field, fields[field]),
  )
  let parameters: FilterParameters
  const known = schemeOf(scheme, what)
  try {
    parameters = checkParameters({ bits, hashes, shards, seed, scheme: known })
  } catch (error) {
    throw corrupt(`holds impossible parameters (${(error as Error).message})`, error)
  }
  if (epoch < 1 || epoch > 0x7fffffff) throw corrupt(`has an invalid epoch ${JSON.stringify(fields.epoch)}`)
  if (generation < 1) throw corrupt(`has an invalid generation ${JSON.stringify(fields.generation)}`)
  const state = fields.state as FilterState
  if (!STATES.includes(state)) throw corrupt(`has an unknown state ${JSON.stringify(fields.state)}`)
  const meta = { parameters, epoch, generation, state }
  if (fed) return { ...meta, feedLength: feedLengthOf(what, fields.feedLength) }
  return fields.kind === 'counting' ? { ...meta, counting: true } : meta
}

/** A format-2 meta's `feedLength`: an integer from 1 to {@link MAX_FEED_LENGTH}, written as docs/SPEC.md 9 writes numbers. */
function feedLengthOf(what: string, stored: string | undefined): number {
  const value = storedInteger(what, 'feedLength', stored)
  if (value < 1 || value > MAX_FEED_LENGTH) throw badField(what, 'feedLength', stored, `1 to ${MAX_FEED_LENGTH} (a filter with a feed, format ${FEED_STORE_FORMAT})`)
  return value
}

/** A random epoch in [1, 2^31 − 1]. */
export function randomEpoch(): number {
  const value = crypto.getRandomValues(new Uint32Array(1))[0] & 0x7fffffff
  return value === 0 ? 1 : value
}

/** A random token naming one holder of the lock. */
export function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** How often a waiting create or open looks again at a filter another process is creating. */
const POLL_MS = 50

/** The stored meta of `name`, or undefined when there is none. */
export async function readMeta(client: RedisClient, name: string, timeout: number): Promise<FilterMeta | undefined> {
  const fields = metaFields(await callRedis(client.hgetall(`${name}:meta`), timeout, `open "${name}"`))
  if (Object.keys(fields).length === 0) return undefined
  return decodeMeta(name, fields)
}

/** Reads the meta, waiting (up to `lockWait` ms) while another process creates or imports the filter. */
export async function readSettledMeta(client: RedisClient, name: string, timeout: number, lockWait: number): Promise<FilterMeta> {
  const deadline = Date.now() + lockWait
  for (;;) {
    const meta = await readMeta(client, name, timeout)
    if (meta === undefined) throw new BloomError('BLOOM_NOT_FOUND', `no filter named "${name}" in Redis`)
    if (meta.state !== 'creating' && meta.state !== 'importing') return meta
    if (Date.now() >= deadline) {
      throw new BloomError(
        'BLOOM_LOCKED',
        `filter "${name}" is still being ${meta.state === 'creating' ? 'created' : 'imported'} by another process; if it died, RedisBloomFilter.destroy() it and create it again`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/** How {@link createMeta} judges and words a filter it finds already there. */
export interface CreateMetaOptions {
  /** Who asks, in the message of a mismatch: `requested` (a create), `the snapshot is` (an import). Default: `requested`. */
  readonly theirs?: string
  /** Whether the caller chose the seed; false (left to chance) takes the stored filter's seed. Default: true. */
  readonly seeded?: boolean
  /** Whether the filter is a counting one (meta field `kind` = `counting`). Default: false. */
  readonly counting?: boolean
  /** Sizes an earlier release gave these options: a stored filter of one of them is accepted. Default: none. */
  readonly earlier?: readonly FilterParameters[]
}

/**
 * Creates the meta hash of `shards`' filter in `state` with lock `token`, unless one exists: then
 * its stored parameters must equal these, the seed aside when `seeded` is false, or one of the
 * `earlier` sizes (else `BLOOM_INCOMPATIBLE`), and its meta is returned.
 */
export async function createMeta(shards: ShardGenerations, state: FilterState, token: string, what: string, options: CreateMetaOptions = {}): Promise<FilterMeta | undefined> {
  const { theirs = 'requested', seeded = true, counting = false, earlier = [] } = options
  const { client, names, parameters, epoch, feedLength } = shards
  const fields = encodeMeta(parameters, epoch, state, token, feedLength)
  if (counting) fields.push('kind', 'counting')
  const created = (await shards.call(client.eval(CREATE_META, 1, names.meta, ...fields) as Promise<unknown[]>, what)) as unknown[]
  if (Number(created[0]) === 1) return undefined
  const stored = decodeMeta(names.name, metaFields(created.slice(1)))
  if ((stored.counting === true) !== counting) {
    throw new BloomError(
      'BLOOM_INCOMPATIBLE',
      `filter "${names.name}" exists as a ${stored.counting === true ? 'counting' : 'plain'} filter; ${theirs} a ${counting ? 'counting' : 'plain'} one`,
    )
  }
  // A feed asked for must be there (a replica follows it); a filter that has one is fine without asking.
  if (feedLength > 0 && stored.feedLength === undefined) {
    throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${names.name}" exists without a feed (store format ${STORE_FORMAT}); feed: true was asked for. Create the filter with a feed under another name, or import its snapshot there`)
  }
  // A creator that left the seed to chance (`seeded` false) takes the stored filter's seed.
  if (!adoptsStored(parameters, stored.parameters, seeded, earlier)) {
    throw new BloomError(
      'BLOOM_INCOMPATIBLE',
      `filter "${names.name}" exists with other parameters: stored ${formatParameters(stored.parameters)}, ${theirs} ${formatParameters(parameters)}${seedNote(stored.parameters, parameters)}`,
    )
  }
  return stored
}

/**
 * Takes the filter's lock for a rebuild, import over an existing filter, or clear; returns the
 * lock's token. `force` takes it from a holder that died.
 */
export async function lockMeta(shards: ShardGenerations, state: FilterState, force: boolean): Promise<string> {
  const token = randomToken()
  const name = shards.names.name
  const result = String(
    await shards.call(shards.client.eval(LOCK_META, 1, shards.names.meta, String(shards.epoch), state, token, force ? '1' : '0'), `${state} "${name}"`),
  )
  if (result === 'ok') return token
  if (result === 'missing') throw new BloomError('BLOOM_NOT_FOUND', `filter "${name}" no longer exists (expired or destroyed)`)
  if (result === 'replaced') throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" was destroyed and created again; open it anew`)
  throw new BloomError('BLOOM_LOCKED', `filter "${name}" is busy (${result}); wait, or pass { force: true } if that process died`)
}

/** Releases the lock held with `token`, counting a new generation when the bits were replaced. */
export async function unlockMeta(shards: ShardGenerations, token: string, replaced: boolean, what: string): Promise<void> {
  await shards.call(shards.client.eval(UNLOCK_META, 1, shards.names.meta, token, replaced ? '1' : '0'), what)
}

/** Deletes the meta hash if its lock is still held with `token` (a create or import that failed). */
export async function dropMeta(shards: ShardGenerations, token: string): Promise<void> {
  await shards.call(shards.client.eval(DROP_META, 1, shards.names.meta, token), 'abandon')
}
