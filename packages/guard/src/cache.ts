/**
 * The cache a {@link CacheGuard} talks to, as raw strings: the guard encodes values, "absent"
 * markers and write fences itself, so any store that can do these few things can be plugged in.
 * The built-in {@link RedisCache} implements it over an ioredis client.
 */
export interface GuardCache {
  /** The entries stored under `keys`, `null` where there is none; one round trip for all. */
  getMany(keys: readonly string[]): Promise<(string | null)[]>
  /** Stores `value` under `key` for `ttlMs` milliseconds, whatever it held. */
  set(key: string, value: string, ttlMs: number): Promise<void>
  /**
   * Stores `value` for `ttlMs` milliseconds only if `key` still holds `expected` (`null`: nothing),
   * atomically; resolves whether it stored. This is what keeps a load that read the database
   * before a `created`/`invalidate` from caching what it read.
   */
  setIf(key: string, value: string, ttlMs: number, expected: string | null): Promise<boolean>
  /** Takes the lock `key` for `ttlMs` milliseconds if nobody holds it; resolves whether it did. Optional. */
  lock?(key: string, token: string, ttlMs: number): Promise<boolean>
  /** Releases the lock `key` if `token` still holds it. Required with `lock`. */
  unlock?(key: string, token: string): Promise<void>
  /**
   * Optional, with `lock`: takes the lock `lockKey` like `lock`, then reads `key`, in one round
   * trip (a load's turn costs one call instead of two). Without it the guard calls `lock`, then
   * `getMany`.
   */
  lockAndGet?(lockKey: string, token: string, ttlMs: number, key: string): Promise<{ locked: boolean; value: string | null }>
  /**
   * Optional, with `lock`: `setIf(key, …)`, then `unlock(lockKey, token)`, in one round trip (the
   * end of a load costs one call instead of two). Resolves whether it stored. Without it the guard
   * calls `setIf`, then `unlock`.
   */
  setIfAndUnlock?(key: string, value: string, ttlMs: number, expected: string | null, lockKey: string, token: string): Promise<boolean>
}

/**
 * The part of an ioredis `Redis` or `Cluster` client the built-in cache uses (structural, so any
 * ioredis 5 or 6 client fits without this package depending on ioredis).
 */
export interface RedisCommandClient {
  call(command: string, ...args: (string | number)[]): Promise<unknown>
  /** ioredis's connection state; while it is not connected the cache fails at once instead of queueing. */
  readonly status?: string
  /** true on an ioredis `Cluster`: keys of one batch lie in different slots, so no MGET. */
  readonly isCluster?: boolean
}

const SET_IF = `local current = redis.call('GET', KEYS[1])
if (current or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`

const UNLOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

// KEYS[1] the lock, KEYS[2] the entry: SET NX PX, then GET, as one command.
const LOCK_AND_GET = `local locked = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return {locked and 1 or 0, redis.call('GET', KEYS[2])}`

// KEYS[1] the entry, KEYS[2] the lock: SET_IF, then UNLOCK, as one command.
const SET_IF_AND_UNLOCK = `local stored = 0
if (redis.call('GET', KEYS[1]) or '') == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  stored = 1
end
if redis.call('GET', KEYS[2]) == ARGV[4] then redis.call('DEL', KEYS[2]) end
return stored`

/** A TTL in ms as SET's PX takes it: a whole number of at least 1. */
function pxOf(ttlMs: number): number {
  return Math.max(1, Math.round(ttlMs))
}

/** ioredis states in which a command would wait in the offline queue rather than run. */
const DISCONNECTED = new Set(['reconnecting', 'close', 'end'])

/**
 * The built-in {@link GuardCache} over Redis (standalone or Cluster): GET/MGET, SET PX, a Lua
 * compare-and-set, and SET NX PX locks released by a compare-and-delete script. On a standalone
 * server a load's lock-and-read and its store-and-unlock are one script each (each command is a
 * socket write and a server round trip); on a Cluster the entry and its lock lie in different
 * slots, so they stay two commands, sent together.
 * A `CacheGuard` given an ioredis client as `cache` wraps it in one of these.
 */
export class RedisCache implements GuardCache {
  readonly client: RedisCommandClient
  private readonly shas = new Map<string, string>()

  constructor(client: RedisCommandClient) {
    this.client = client
  }

  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    this.checkConnected()
    if (keys.length === 0) return []
    if (keys.length === 1 || this.client.isCluster === true) {
      // A Cluster spreads the keys over slots (MGET would fail with CROSSSLOT): one GET per key, all at once.
      return Promise.all(keys.map((key) => this.client.call('GET', key) as Promise<string | null>))
    }
    return (await this.client.call('MGET', ...keys)) as (string | null)[]
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.checkConnected()
    await this.client.call('SET', key, value, 'PX', pxOf(ttlMs))
  }

  async setIf(key: string, value: string, ttlMs: number, expected: string | null): Promise<boolean> {
    this.checkConnected()
    return Number(await this.script(SET_IF, key, expected ?? '', value, pxOf(ttlMs))) === 1
  }

  async lock(key: string, token: string, ttlMs: number): Promise<boolean> {
    this.checkConnected()
    return (await this.client.call('SET', key, token, 'NX', 'PX', pxOf(ttlMs))) === 'OK'
  }

  async unlock(key: string, token: string): Promise<void> {
    this.checkConnected()
    await this.script(UNLOCK, key, token)
  }

  async lockAndGet(lockKey: string, token: string, ttlMs: number, key: string): Promise<{ locked: boolean; value: string | null }> {
    this.checkConnected()
    if (this.client.isCluster === true) {
      const [locked, [value]] = await Promise.all([this.lock(lockKey, token, ttlMs), this.getMany([key])])
      return { locked, value }
    }
    const [locked, value] = (await this.script2(LOCK_AND_GET, lockKey, key, token, pxOf(ttlMs))) as [number, string | null]
    return { locked: Number(locked) === 1, value }
  }

  async setIfAndUnlock(key: string, value: string, ttlMs: number, expected: string | null, lockKey: string, token: string): Promise<boolean> {
    this.checkConnected()
    if (this.client.isCluster === true) {
      const [stored] = await Promise.all([this.setIf(key, value, ttlMs, expected), this.unlock(lockKey, token)])
      return stored
    }
    return Number(await this.script2(SET_IF_AND_UNLOCK, key, lockKey, expected ?? '', value, pxOf(ttlMs), token)) === 1
  }

  private checkConnected(): void {
    const status = this.client.status
    if (status !== undefined && DISCONNECTED.has(status)) throw new Error(`Redis connection is ${status}`)
  }

  /** A one-key script. */
  private script(source: string, key: string, ...args: (string | number)[]): Promise<unknown> {
    return this.run(source, [1, key, ...args])
  }

  /** A two-key script (standalone only: on a Cluster the keys lie in different slots). */
  private script2(source: string, key1: string, key2: string, ...args: (string | number)[]): Promise<unknown> {
    return this.run(source, [2, key1, key2, ...args])
  }

  /** EVALSHA, falling back to EVAL once when the server does not know the script yet. */
  private async run(source: string, keysAndArgs: (string | number)[]): Promise<unknown> {
    const sha = this.shas.get(source)
    if (sha !== undefined) {
      try {
        return await this.client.call('EVALSHA', sha, ...keysAndArgs)
      } catch (error) {
        if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
      }
    }
    const result = await this.client.call('EVAL', source, ...keysAndArgs)
    if (sha === undefined) this.shas.set(source, await sha1(source))
    return result
  }
}

async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** Whether `cache` is a {@link GuardCache} rather than a Redis client to wrap. */
export function isGuardCache(cache: unknown): cache is GuardCache {
  const candidate = cache as Partial<GuardCache>
  return typeof candidate.getMany === 'function' && typeof candidate.setIf === 'function' && typeof candidate.set === 'function'
}
