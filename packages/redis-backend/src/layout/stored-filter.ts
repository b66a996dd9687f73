// What a name holds, read once: one HGETALL of its meta hash (again only while another process is
// still creating or importing the filter), the kind decided from its fields, then a fixed or
// counting filter's meta decoded, or a layered filter's fields handed on whole to be read by the
// layered open (docs/SPEC.md 9.4 and 9.8, open step 2). RedisBloomFilter.open dispatches on it.
import { BloomError } from '@bloomkit/core'
import { callRedis } from '../errors.js'
import type { RedisClient } from '../wire/client.js'
import { metaKey } from './key-names.js'
import { notFound, untilSettled } from './meta-lock.js'
import { decodeMeta, metaFields, type FilterMeta } from './meta.js'

/** Which kind of filter `open` or `import` must find: a fixed one (`RedisBloomFilter`), a layered one (`LayeredRedisFilter`) or a counting one (`RedisCountingFilter`). */
export type RedisFilterKind = 'fixed' | 'layered' | 'counting'

/** A stored filter as its meta hash says: a fixed or counting filter's meta, decoded and checked, or a layered filter's fields as read. */
export type StoredFilter =
  | { readonly kind: 'fixed' | 'counting'; readonly meta: FilterMeta }
  | { readonly kind: 'layered'; readonly fields: Record<string, string> }

/** How {@link readStoredFilter} reads. */
export interface StoredFilterRead {
  /** Each command's bound, in ms. */
  readonly timeout: number
  /** How long to wait while another process creates or imports the filter, in ms. */
  readonly lockWait: number
  /** The kind the caller insists on; another is `BLOOM_INCOMPATIBLE` naming both. Default: any. */
  readonly asked?: RedisFilterKind
}

/**
 * Reads the meta hash of `name` once and tells what it holds; waits (up to `lockWait`) while a
 * fixed or counting filter is being created or imported.
 * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_INCOMPATIBLE` (not the kind asked for),
 *   `BLOOM_CORRUPT_STORE` (not a bloomkit filter's hash, or a fixed meta that fails its checks),
 *   `BLOOM_UNSUPPORTED_VERSION` (a later format or kind), `BLOOM_LOCKED`, `BLOOM_STORE_UNAVAILABLE`.
 */
export async function readStoredFilter(client: RedisClient, name: string, { timeout, lockWait, asked }: StoredFilterRead): Promise<StoredFilter> {
  return untilSettled(name, lockWait, async () => {
    const fields = metaFields(await callRedis(client.hgetall(metaKey(name)), timeout, `open "${name}"`))
    if (Object.keys(fields).length === 0) throw notFound(name)
    const stored = storedFilterOf(name, fields, asked)
    return { read: stored, meta: stored.kind === 'layered' ? undefined : stored.meta }
  })
}

/**
 * The meta of the fixed or counting filter `name`, read as {@link readStoredFilter} reads it.
 * @throws BloomError as {@link readStoredFilter}; another kind than `asked` is `BLOOM_INCOMPATIBLE`.
 */
export async function readStoredMeta(client: RedisClient, name: string, read: StoredFilterRead & { readonly asked: 'fixed' | 'counting' }): Promise<FilterMeta> {
  const stored = await readStoredFilter(client, name, read)
  // The kind asked for is the kind found: readStoredFilter refuses any other.
  return (stored as Extract<StoredFilter, { readonly meta: FilterMeta }>).meta
}

/**
 * The kind `fields` (a whole meta hash) name, in the order of docs/SPEC.md 9.4's open step 2: a
 * hash without `format` is not a bloomkit filter's, whatever else it holds; a layered meta is
 * handed on (its own open checks the rest); a fixed or counting meta asked for as a layered one is
 * refused as it stands; any other is decoded, and then compared with the kind asked for.
 */
function storedFilterOf(name: string, fields: Record<string, string>, asked: RedisFilterKind | undefined): StoredFilter {
  if (fields.format !== undefined && fields.kind === 'layered') {
    refuseOtherKind(name, 'layered', asked)
    return { kind: 'layered', fields }
  }
  if (asked === 'layered' && fields.format !== undefined && (fields.kind === undefined || fields.kind === 'counting')) {
    refuseOtherKind(name, fields.kind === 'counting' ? 'counting' : 'fixed', asked)
  }
  const meta = decodeMeta(name, fields)
  const kind = meta.counting === true ? 'counting' : 'fixed'
  refuseOtherKind(name, kind, asked)
  return { kind, meta }
}

/** `BLOOM_INCOMPATIBLE` naming both kinds when `found` is not the kind `asked` for. */
function refuseOtherKind(name: string, found: RedisFilterKind, asked: RedisFilterKind | undefined): void {
  if (asked === undefined || asked === found) return
  throw new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" is a ${found} filter, not a ${asked} one (kind: '${asked}' was asked for)`)
}
