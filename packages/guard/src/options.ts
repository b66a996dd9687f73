import { isGuardCache, RedisCache, type GuardCache, type RedisCommandClient } from './cache.js'
import { isWellFormed } from './well-formed.js'
import { GuardError, invalidOption } from './errors.js'

/** A key: what the filters take (a string or a Uint8Array). */
export type GuardKey = string | Uint8Array

/**
 * What the guard needs of a filter: any bloomkit filter fits (`MemoryBloomFilter`,
 * `LevelBloomFilter`, `RedisBloomFilter`, and their counting kinds), synchronous or not.
 */
export interface GuardFilter {
  readonly isClosed: boolean
  has(key: GuardKey): boolean | Promise<boolean>
  hasMany(keys: Iterable<GuardKey>): boolean[] | Promise<boolean[]>
  add(key: GuardKey): boolean | Promise<boolean>
  addMany(keys: Iterable<GuardKey>): boolean[] | Promise<boolean[]>
  /**
   * A counting filter's removal (`CountingMemoryFilter`, `CountingLevelFilter`,
   * `RedisCountingFilter`); {@link CacheGuard.deleted} uses it when there.
   */
  remove?(key: GuardKey): boolean | Promise<boolean>
  /** `RedisBloomFilter`'s atomic rebuild; {@link CacheGuard.rebuild} uses it when there. */
  rebuild?(keys: AsyncIterable<GuardKey> | Iterable<GuardKey>): Promise<void>
}

/** Options of a {@link CacheGuard}. */
export interface CacheGuardOptions<V, K extends GuardKey = GuardKey> {
  /** Holds every existing key; "absent" answers skip the cache and the database. */
  filter: GuardFilter
  /**
   * The source of truth: resolves to the value, or `null`/`undefined` when `id` does not exist.
   * A throw or rejection rejects the `get` (`GUARD_LOAD_FAILED`) and caches nothing; so does a
   * load that runs past `loadTimeout` (`GUARD_LOAD_TIMEOUT`), after which `context.signal` aborts
   * (pass it to your database client to cancel the query).
   */
  load: (id: K, context: LoadContext) => V | null | undefined | Promise<V | null | undefined>
  /**
   * An ioredis `Redis` or `Cluster` client (the built-in {@link RedisCache}), or any {@link GuardCache}.
   * Default: none (filter, optional `l1` and in-process single flight only).
   */
  cache?: RedisCommandClient | GuardCache
  /**
   * Names the guard's cache and lock keys (`<name>:<id>`, with `%`, `:`, `#`, `!`, `~` in the name
   * percent-escaped, so guards never share a key). 1 to 200 characters, no `{`/`}` (Redis Cluster
   * hash tags), no lone surrogate.
   */
  name: string
  /** Seconds a found value stays cached (> 0). Default: 300. */
  ttl?: number
  /** Seconds an "absent" marker stays cached (> 0). Default: 30. */
  nullTtl?: number
  /** Each TTL is spread uniformly over ±`jitter` of itself, so entries cached together expire apart (0 to 0.5). Default: 0.1. */
  jitter?: number
  /** Turns a value into the cache's string. Default: `JSON.stringify`. */
  serialize?: (value: V) => string
  /** Turns the cache's string back into a value. Default: `JSON.parse`. */
  deserialize?: (text: string) => V
  /**
   * What a `get` does when the filter fails or times out: `'load'` treats the key as maybe present
   * and goes on to the cache and database (available, but an attack reaches the cache and the
   * database while the filter is down); `'reject'` rejects with `GUARD_FILTER_UNAVAILABLE`
   * (protects the database, but real users get errors). Never "not found". Default: `'load'`.
   */
  onFilterError?: 'load' | 'reject'
  /** Milliseconds a filter call may take before it counts as failed (1 to 60 000). Default: 1000. */
  filterTimeout?: number
  /** Milliseconds a cache call may take before it counts as failed (1 to 60 000). Default: 250. */
  cacheTimeout?: number
  /**
   * Milliseconds a `get` skips the filter or the cache after a call to it failed or timed out (a
   * circuit breaker: during an outage each request pays no timeout; 0 to 60 000, 0 = always try).
   * Writes (`created`, `invalidate`) always try. Default: 1000.
   */
  cooldown?: number
  /** Whether loads take a lock in the cache so that one process loads a key for all (when the cache has locks). Default: true. */
  lock?: boolean
  /**
   * Milliseconds a load may run (1 to 600 000). Past it, every `get` waiting on the load rejects
   * with `GUARD_LOAD_TIMEOUT`, the load's signal aborts, its result (if it ever comes) is dropped,
   * and the key's lock is released, so the next `get` loads again. Keep it at most `lockTtl`, so a
   * lock never expires under a load still running. Default: 5000.
   */
  loadTimeout?: number
  /** Milliseconds a lock lives if its holder dies (10 to 600 000). Default: 5000. */
  lockTtl?: number
  /** Milliseconds a `get` waits for another process's load before loading itself (0 to 60 000). Default: 1000. */
  lockWait?: number
  /** An in-process LRU of found values for hot keys, or `false`. Default: `false`. */
  l1?: false | { max: number; ttl?: number }
}

/** What `load` gets besides the id. */
export interface LoadContext {
  /** Aborts when the load runs past `loadTimeout`: its result is no longer wanted. */
  readonly signal: AbortSignal
}

/** The options after checking, with defaults applied. */
export interface GuardSettings<V, K extends GuardKey> {
  filter: GuardFilter
  load: (id: K, context: LoadContext) => V | null | undefined | Promise<V | null | undefined>
  cache: GuardCache | undefined
  name: string
  ttlMs: number
  nullTtlMs: number
  jitter: number
  serialize: (value: V) => string
  deserialize: (text: string) => V
  onFilterError: 'load' | 'reject'
  filterTimeout: number
  cacheTimeout: number
  cooldown: number
  lock: boolean
  loadTimeout: number
  lockTtl: number
  lockWait: number
  l1: { max: number; ttl: number } | undefined
}

/** The names of {@link CacheGuardOptions}, written as a Record so that an option added to the type must be listed. */
const GUARD_OPTIONS = Object.keys(
  {
    filter: true,
    load: true,
    cache: true,
    name: true,
    ttl: true,
    nullTtl: true,
    jitter: true,
    serialize: true,
    deserialize: true,
    onFilterError: true,
    filterTimeout: true,
    cacheTimeout: true,
    cooldown: true,
    lock: true,
    loadTimeout: true,
    lockTtl: true,
    lockWait: true,
    l1: true,
  } satisfies Record<keyof CacheGuardOptions<unknown>, true>,
)

/**
 * Refuses anything but an object of own properties named in `allowed`: a typo (`nulTtl`) would
 * otherwise silently keep a default, and an option inherited from a prototype would be read
 * unseen. Core's checkOptionNames does the same for filters; the guard keeps its own small copy
 * because it has no runtime dependency on @bloomkit/core.
 */
export function checkNames(what: string, options: unknown, allowed: readonly string[]): void {
  if (options === null || typeof options !== 'object') throw invalidOption(what === 'CacheGuard' ? 'options' : `${what} options`, 'an object', options)
  const unknown = Object.keys(options).filter((name) => !allowed.includes(name))
  if (unknown.length > 0) {
    const named = unknown.map((name) => {
      const near = allowed.find((candidate) => editDistance(name.toLowerCase(), candidate.toLowerCase()) <= 2)
      return `"${name}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`
    })
    throw new GuardError('GUARD_INVALID_OPTION', `${what}: unknown option${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; it takes ${allowed.join(', ')}`)
  }
  const inherited = allowed.filter((name) => name in options && !Object.hasOwn(options, name))
  for (const name in options) if (!Object.hasOwn(options, name) && !inherited.includes(name)) inherited.push(name)
  if (inherited.length > 0) throw new GuardError('GUARD_INVALID_OPTION', `${what}: options must be own properties, not inherited: ${inherited.join(', ')}`)
}

/** An option's value, or `fallback` when it is left out. Only `undefined` is "left out": `null` is a value, which the option's check refuses. */
export function given<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value
}

/** Levenshtein distance (option names are short: a row at a time is plenty). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]
}

/** Checks every option, naming the first bad one; applies defaults. */
export function checkOptions<V, K extends GuardKey>(options: CacheGuardOptions<V, K>): GuardSettings<V, K> {
  checkNames('CacheGuard', options, GUARD_OPTIONS)
  const { filter, load, cache } = options
  if (filter === null || typeof filter !== 'object' || typeof filter.has !== 'function' || typeof filter.hasMany !== 'function' || typeof filter.add !== 'function') {
    throw invalidOption('filter', 'a bloomkit filter (MemoryBloomFilter, LevelBloomFilter, RedisBloomFilter)', filter)
  }
  if (filter.isClosed) throw invalidOption('filter', 'an open filter', 'a closed filter')
  if (typeof load !== 'function') throw invalidOption('load', 'a function (id) => value | null', load)
  if (typeof options.name !== 'string' || options.name.length === 0 || options.name.length > 200 || /[{}]/.test(options.name) || !isWellFormed(options.name)) {
    throw invalidOption('name', 'a string of 1 to 200 characters without { or } or a lone surrogate', options.name)
  }
  let guardCache: GuardCache | undefined
  if (cache !== undefined) {
    if (cache === null || typeof cache !== 'object') throw invalidOption('cache', 'an ioredis client or a GuardCache (or left out for none)', cache)
    if (isGuardCache(cache)) guardCache = cache
    else if (typeof (cache as RedisCommandClient).call === 'function') guardCache = new RedisCache(cache as RedisCommandClient)
    else throw invalidOption('cache', 'an ioredis client or a GuardCache', cache)
  }
  const serialize = given(options.serialize, JSON.stringify)
  const deserialize = given(options.deserialize, JSON.parse as (text: string) => V)
  if (typeof serialize !== 'function') throw invalidOption('serialize', 'a function (value) => string', serialize)
  if (typeof deserialize !== 'function') throw invalidOption('deserialize', 'a function (string) => value', deserialize)
  const onFilterError = given(options.onFilterError, 'load')
  if (onFilterError !== 'load' && onFilterError !== 'reject') throw invalidOption('onFilterError', "'load' or 'reject'", onFilterError)
  const lock = given(options.lock, true)
  if (typeof lock !== 'boolean') throw invalidOption('lock', 'true or false', lock)
  let l1: GuardSettings<V, K>['l1']
  if (options.l1 !== undefined && options.l1 !== false) {
    if (options.l1 === null || typeof options.l1 !== 'object') throw invalidOption('l1', 'false or { max, ttl? }', options.l1)
    checkNames('CacheGuard l1', options.l1, ['max', 'ttl'])
    l1 = { max: integer('l1.max', options.l1.max, 1, 100_000_000), ttl: integer('l1.ttl', given(options.l1.ttl, 1000), 1, 86_400_000) }
  }
  return {
    filter,
    load,
    cache: guardCache,
    name: options.name,
    ttlMs: seconds('ttl', given(options.ttl, 300)) * 1000,
    nullTtlMs: seconds('nullTtl', given(options.nullTtl, 30)) * 1000,
    jitter: fraction('jitter', given(options.jitter, 0.1), 0.5),
    serialize,
    deserialize,
    onFilterError,
    filterTimeout: integer('filterTimeout', given(options.filterTimeout, 1000), 1, 60_000),
    cacheTimeout: integer('cacheTimeout', given(options.cacheTimeout, 250), 1, 60_000),
    cooldown: integer('cooldown', given(options.cooldown, 1000), 0, 60_000),
    lock,
    loadTimeout: integer('loadTimeout', given(options.loadTimeout, 5000), 1, 600_000),
    lockTtl: integer('lockTtl', given(options.lockTtl, 5000), 10, 600_000),
    lockWait: integer('lockWait', given(options.lockWait, 1000), 0, 60_000),
    l1,
  }
}

/** A TTL in seconds: finite, > 0, at most 10 years, at least a millisecond. */
function seconds(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0.001 || value > 315_360_000) {
    throw invalidOption(name, 'a number of seconds from 0.001 to 315360000', value)
  }
  return value
}

function fraction(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= max)) throw invalidOption(name, `a number from 0 to ${max}`, value)
  return value
}

function integer(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidOption(name, `an integer from ${min} to ${max}`, value)
  }
  return value
}
