import { BloomError, checkInteger, invalidParameter } from './errors.js'
import { BLOCK_BITS } from './bits/positions.js'

/** The most bits one shard holds: 2^32, which is also a Redis string's limit (512 MiB). */
export const MAX_SHARD_BITS = 2 ** 32
/** The most shards a filter may have. */
export const MAX_SHARDS = 65_536
/** The most bit positions per key. */
export const MAX_HASHES = 64
/**
 * How a key's positions spread over its shard (docs/SPEC.md, section 4):
 * - `'blocked'`: all of a key's bits fall in one 512-bit block (a 64-byte cache line, one page of a
 *   LevelDB store), so a check touches memory once. It needs a few per cent more bits for the same
 *   error rate; `sizeFilter` adds them. The default for new filters.
 * - `'classic'`: positions spread over the whole shard (enhanced double hashing), the textbook
 *   filter that Guava and Redisson size; any bit count that is a multiple of 8 works.
 */
export type BitLayout = 'blocked' | 'classic'

/**
 * A hash scheme: how a key's two hashes become bit positions (docs/SPEC.md, section 4). Snapshots,
 * LevelDB folders and Redis metas record its number.
 * - 1: classic, enhanced double hashing whose 32-bit values are scaled straight onto the shard.
 *   On shards of a few thousand bits or less its positions collapse for some keys and the error
 *   rate exceeds the one asked for; still read and written for the filters that use it.
 * - 2: blocked (all of a key's bits in one 512-bit block).
 * - 3: classic, scheme 1's sequence remixed per probe (MurmurHash3's fmix32) before scaling, so
 *   that positions stay independent on a shard of any size. Every new classic filter uses it.
 */
export type HashScheme = 1 | 2 | 3

/**
 * The layout of every hash scheme this release reads and writes. These numbers are part of the
 * stored format: never renumber or reuse one; a new way of placing bits gets a new number.
 */
export const SCHEME_LAYOUTS: Readonly<Record<HashScheme, BitLayout>> = { 1: 'classic', 2: 'blocked', 3: 'classic' }

/**
 * The hash scheme a writer gives a NEW filter or layer of each layout (an existing filter keeps
 * the scheme it records). Never renumber: see {@link SCHEME_LAYOUTS}.
 */
export const HASH_SCHEMES: Readonly<Record<BitLayout, HashScheme>> = { classic: 3, blocked: 2 }

/**
 * The hash scheme a recorded number stands for: the number, or its decimal text (as the Redis
 * meta hash keeps it).
 * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` naming `what` and the schemes this release knows.
 */
export function schemeOf(scheme: number | string | undefined, what: string): HashScheme {
  for (const known of [1, 2, 3] as const) {
    if (String(known) === String(scheme)) return known
  }
  const known = Object.entries(SCHEME_LAYOUTS).map(([number, layout]) => `${number} (${layout})`).join(', ')
  throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `${what} uses hash scheme ${scheme}; this release knows schemes ${known}`)
}

/**
 * The layout a recorded hash scheme stands for (see {@link schemeOf}).
 * @throws BloomError `BLOOM_UNSUPPORTED_VERSION` naming `what` and the schemes this release knows.
 */
export function layoutOfScheme(scheme: number | string | undefined, what: string): BitLayout {
  return SCHEME_LAYOUTS[schemeOf(scheme, what)]
}

/**
 * Everything that decides where a key's bits go. Two filters can be merged, and a snapshot read
 * into a store, only when these are identical. Stored in every snapshot and by every backend.
 */
export interface FilterParameters {
  /**
   * Total bits: `shards × shardBits`, where shardBits is from max(8, hashes) to 2^32 and a multiple
   * of 8 (classic) or of 512 (blocked).
   */
  readonly bits: number
  /** Bit positions per key (k), from 1 to 64. */
  readonly hashes: number
  /** Shards the bits are split into, from 1 to 65 536; each key lives in one. */
  readonly shards: number
  /** Seed of the key hash, an unsigned 32-bit integer. Keep it secret to keep positions unguessable. */
  readonly seed: number
  /** Where a key's bits go within its shard. */
  readonly layout: BitLayout
  /**
   * The hash scheme that places them: 3 (classic) or 2 (blocked) for a new filter; 1 for a classic
   * filter written before scheme 3, read from its snapshot or store. Always one of `layout`'s.
   */
  readonly scheme: HashScheme
}

/**
 * Explicit parameters as a user may write them: `layout` may be left out and then means
 * `'classic'` (or the layout of `scheme`), the layout that bit and hash counts from Guava, Redisson
 * or `optimalParameters` assume; `scheme` may be left out and then means the layout's scheme for
 * new filters ({@link HASH_SCHEMES}). Give `scheme: 1` only to rebuild a classic filter of an
 * earlier release bit for bit.
 */
export type FilterParametersInput = Omit<FilterParameters, 'layout' | 'scheme'> & { readonly layout?: BitLayout; readonly scheme?: HashScheme }

/** Bits in each shard. */
export function shardBitsOf(parameters: FilterParameters): number {
  return parameters.bits / parameters.shards
}

/** Bytes in each shard. */
export function shardBytesOf(parameters: FilterParameters): number {
  return parameters.bits / parameters.shards / 8
}

/** Asserts a {@link BitLayout}. */
export function checkLayout(layout: unknown): BitLayout {
  if (layout !== 'blocked' && layout !== 'classic') throw invalidParameter('layout', "'blocked' or 'classic'", layout)
  return layout
}

/**
 * Validates explicit parameters, as read from a snapshot, a store or a user who knows the sizes.
 *
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming the first field out of range.
 */
export function checkParameters(parameters: FilterParametersInput): FilterParameters {
  if (parameters === null || typeof parameters !== 'object') throw invalidParameter('parameters', 'an object', parameters)
  const scheme = parameters.scheme === undefined ? undefined : checkScheme(parameters.scheme)
  const layout = checkLayout(parameters.layout === undefined ? (scheme === undefined ? 'classic' : SCHEME_LAYOUTS[scheme]) : parameters.layout)
  if (scheme !== undefined && SCHEME_LAYOUTS[scheme] !== layout) {
    throw invalidParameter('scheme', `a ${layout} scheme (${layout === 'classic' ? '1 or 3' : '2'}) for layout ${layout}`, scheme)
  }
  const hashes = checkInteger('hashes', parameters.hashes, 1, MAX_HASHES)
  const shards = checkInteger('shards', parameters.shards, 1, MAX_SHARDS)
  const seed = checkInteger('seed', parameters.seed, 0, 0xffffffff)
  const bits = checkInteger('bits', parameters.bits, 8, MAX_SHARDS * MAX_SHARD_BITS)
  const shardBits = bits / shards
  const multiple = layout === 'blocked' ? BLOCK_BITS : 8
  if (!Number.isInteger(shardBits) || shardBits % multiple !== 0 || shardBits > MAX_SHARD_BITS || shardBits < hashes) {
    throw invalidParameter(
      'bits',
      `shards × bits per shard, with bits per shard a multiple of ${multiple} from max(${multiple}, hashes) to 2^32 ` +
        `(layout = ${layout}, shards = ${shards}, hashes = ${hashes})`,
      bits,
    )
  }
  return { bits, hashes, shards, seed, layout, scheme: scheme ?? HASH_SCHEMES[layout] }
}

/** Asserts a {@link HashScheme} number. */
export function checkScheme(scheme: unknown): HashScheme {
  if (scheme !== 1 && scheme !== 2 && scheme !== 3) throw invalidParameter('scheme', '1, 2 or 3', scheme)
  return scheme
}

/** Whether two filters place every key on the same bits. */
export function sameParameters(a: FilterParameters, b: FilterParameters): boolean {
  return a.bits === b.bits && a.hashes === b.hashes && a.shards === b.shards && a.seed === b.seed && a.layout === b.layout && a.scheme === b.scheme
}

/** Throws `BLOOM_INCOMPATIBLE`, listing both sets of parameters, unless they are the same. */
export function assertSameParameters(expected: FilterParameters, actual: FilterParameters, what: string): void {
  if (sameParameters(expected, actual)) return
  throw new BloomError(
    'BLOOM_INCOMPATIBLE',
    `${what} has different parameters: expected ${formatParameters(expected)}, got ${formatParameters(actual)}${seedNote(expected, actual)}`,
  )
}

/**
 * `bits=… hashes=… shards=… layout=… scheme=…`, for messages. The seed is left out: it is the key of the
 * keyed hashing, and messages reach logs and HTTP responses (say that seeds differ with {@link seedNote}).
 */
export function formatParameters(p: FilterParameters): string {
  return `bits=${p.bits} hashes=${p.hashes} shards=${p.shards} layout=${p.layout} scheme=${p.scheme}`
}

/** Options of {@link seedNote}. */
export interface SeedNoteOptions {
  /**
   * Whether the caller chose the seed. False (a `create` without `seed`, which takes the stored
   * filter's): the seeds are not what differs, and saying so would send the user after a seed they
   * never gave. Default: true.
   */
  readonly seeded?: boolean
}

/**
 * `"; the seeds differ"` when they do (and the caller chose its seed), else `""`: the part of a
 * mismatch {@link formatParameters} does not show.
 */
export function seedNote(a: FilterParameters, b: FilterParameters, { seeded = true }: SeedNoteOptions = {}): string {
  return !seeded || a.seed === b.seed ? '' : '; the seeds differ'
}

