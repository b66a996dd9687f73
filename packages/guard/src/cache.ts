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

/** ioredis states in which a command would wait in the offline queue rather than run. */
const DISCONNECTED = new Set(['reconnecting', 'close', 'end'])

/**
 * The built-in {@link GuardCache} over Redis (standalone or Cluster): GET/MGET, SET PX, a Lua
 * compare-and-set, and SET NX PX locks released by a compare-and-delete script.
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
    await this.client.call('SET', key, value, 'PX', Math.max(1, Math.round(ttlMs)))
  }

  async setIf(key: string, value: string, ttlMs: number, expected: string | null): Promise<boolean> {
    this.checkConnected()
    return Number(await this.script(SET_IF, key, expected ?? '', value, Math.max(1, Math.round(ttlMs)))) === 1
  }

  async lock(key: string, token: string, ttlMs: number): Promise<boolean> {
    this.checkConnected()
    return (await this.client.call('SET', key, token, 'NX', 'PX', Math.max(1, Math.round(ttlMs)))) === 'OK'
  }

  async unlock(key: string, token: string): Promise<void> {
    this.checkConnected()
    await this.script(UNLOCK, key, token)
  }

  private checkConnected(): void {
    const status = this.client.status
    if (status !== undefined && DISCONNECTED.has(status)) throw new Error(`Redis connection is ${status}`)
  }

  /** EVALSHA, falling back to EVAL once when the server does not know the script yet. */
  private async script(source: string, key: string, ...args: (string | number)[]): Promise<unknown> {
    const sha = this.shas.get(source)
    if (sha !== undefined) {
      try {
        return await this.client.call('EVALSHA', sha, 1, key, ...args)
      } catch (error) {
        if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error
      }
    }
    const result = await this.client.call('EVAL', source, 1, key, ...args)
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
