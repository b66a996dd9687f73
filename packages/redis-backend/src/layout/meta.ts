// A filter's meta hash `<name>:meta` (docs/SPEC.md 9.3, 9.4): its fields encoded, decoded and
// checked. Pure: what reads and locks it in Redis is meta-lock.ts.
import { BloomError, type FilterParameters } from '@bloomkit/core'
import { checkParameters, crc32, hashSchemes } from '@bloomkit/core/store'
import { FEED_STORE_FORMAT, MAX_FEED_LENGTH } from './feed.js'
import { badField, storedInteger } from './stored-numbers.js'

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
  if (fed) return { ...meta, feedLength: storedFeedLength(what, fields.feedLength) }
  return fields.kind === 'counting' ? { ...meta, counting: true } : meta
}

/**
 * A format-2 meta's `feedLength` (a fixed or a layered filter's): an integer from 1 to
 * {@link MAX_FEED_LENGTH}, written as docs/SPEC.md 9 writes numbers.
 * @throws BloomError `BLOOM_CORRUPT_STORE`.
 */
export function storedFeedLength(what: string, stored: string | undefined): number {
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
