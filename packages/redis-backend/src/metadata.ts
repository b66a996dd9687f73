import { BloomError, checkParameters, HASH_SCHEMES, layoutOfScheme, type FilterParameters } from '@bloomkit/core'

/** Version of the layout in Redis (meta fields, key names, shard marker); bumped on any change. */
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
}

/** The meta hash's fields for a new filter, as ioredis arguments (field, value, …). */
export function encodeMeta(parameters: FilterParameters, epoch: number, state: FilterState, token: string): string[] {
  return [
    'format', String(STORE_FORMAT),
    'scheme', String(HASH_SCHEMES[parameters.layout]),
    'seed', String(parameters.seed),
    'bits', String(parameters.bits),
    'hashes', String(parameters.hashes),
    'shards', String(parameters.shards),
    'epoch', String(epoch),
    'generation', '1',
    'state', state,
    'token', token,
    'created', String(Date.now()),
  ]
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

/**
 * Decodes and checks a meta hash.
 * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` for a later format or hash scheme,
 *   `BLOOM_CORRUPT_STORE` for a hash that is not a bloomkit filter's.
 */
export function decodeMeta(name: string, fields: Record<string, string>): FilterMeta {
  const corrupt = (why: string, cause?: unknown) =>
    new BloomError('BLOOM_CORRUPT_STORE', `filter "${name}": its meta hash ${why}`, cause === undefined ? undefined : { cause })
  if (fields.format === undefined) throw corrupt('has no "format" field: not a bloomkit filter')
  if (fields.format !== String(STORE_FORMAT)) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `filter "${name}" uses store format ${fields.format}; this release reads format ${STORE_FORMAT}`)
  }
  const layout = layoutOfScheme(fields.scheme, `filter "${name}"`)
  let parameters: FilterParameters
  try {
    parameters = checkParameters({ bits: Number(fields.bits), hashes: Number(fields.hashes), shards: Number(fields.shards), seed: Number(fields.seed), layout })
  } catch (error) {
    throw corrupt(`holds impossible parameters (${(error as Error).message})`, error)
  }
  const epoch = Number(fields.epoch)
  if (!Number.isInteger(epoch) || epoch < 1 || epoch > 0x7fffffff) throw corrupt(`has an invalid epoch ${JSON.stringify(fields.epoch)}`)
  const states: FilterState[] = ['creating', 'importing', 'rebuilding', 'replacing', 'clearing', 'ready']
  const state = fields.state as FilterState
  if (!states.includes(state)) throw corrupt(`has an unknown state ${JSON.stringify(fields.state)}`)
  return { parameters, epoch, generation: Number(fields.generation) || 1, state }
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
