// The ioredis surface: the few client methods bloomkit calls, and what it reads of a client's
// shape (Cluster or not, its slot map, its socket). Nothing here knows of filters.
import { BloomError } from '@bloomkit/core'
import { invalidParameter } from '@bloomkit/core/store'

/** A key as ioredis takes it. */
export type RedisKey = string | Buffer
/** An argument as ioredis takes it. */
export type RedisArgument = string | Buffer | number

/**
 * A connected ioredis client, standalone (`new Redis(…)`) or `new Cluster(…)`, of ioredis 5.9 or
 * later or 6, with the user's own options. Written as the few methods bloomkit calls rather than
 * as ioredis's own classes, so that the app's ioredis (a peer dependency: whichever major and copy
 * the app has) type-checks without a cast. A command newly used anywhere in the backend is added
 * here; test/clients.test.ts checks that ioredis 5 and 6, standalone and Cluster, still fit.
 */
export interface RedisClient {
  readonly options: { readonly keyPrefix?: string | undefined }
  sendCommand(command: object): unknown
  eval(script: string, keyCount: number, ...keysAndArguments: RedisArgument[]): Promise<unknown>
  callBuffer(command: string, ...arguments_: RedisArgument[]): Promise<unknown>
  getrangeBuffer(key: RedisKey, start: number, end: number): Promise<Buffer>
  setrange(key: RedisKey, offset: number, value: RedisKey): Promise<number>
  hgetall(key: RedisKey): Promise<Record<string, string>>
  hmget(key: RedisKey, ...fields: string[]): Promise<Array<string | null>>
  hget(key: RedisKey, field: string): Promise<string | null>
  hset(key: RedisKey, ...fieldsAndValues: Array<string | number>): Promise<number>
  hincrby(key: RedisKey, field: string, increment: number): Promise<number>
  hdel(key: RedisKey, ...fields: string[]): Promise<number>
  del(...keys: RedisKey[]): Promise<number>
  exists(...keys: RedisKey[]): Promise<number>
  unlink(...keys: RedisKey[]): Promise<number>
  pttl(key: RedisKey): Promise<number>
  strlen(key: RedisKey): Promise<number>
  pexpire(key: RedisKey, milliseconds: number): Promise<number>
  expire(key: RedisKey, seconds: number): Promise<number>
  persist(key: RedisKey): Promise<number>
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void
  multi(): RedisTransaction
}

/**
 * Whether `client` is an ioredis Cluster. Duck-typed by ioredis's `isCluster`, not instanceof: the
 * app's ioredis may be another copy than ours (a peer dependency).
 */
export function isCluster(client: RedisClient): boolean {
  return (client as { isCluster?: boolean }).isCluster === true
}

/** The master serving `slot` ("host:port") in a Cluster client's slot map, or undefined while unknown. */
export function masterOfSlot(client: RedisClient, slot: number): string | undefined {
  return (client as unknown as { slots?: string[][] }).slots?.[slot]?.[0]
}

/**
 * Holds a standalone ioredis client's socket writes until the returned function is called, so
 * that the commands a batch or a layered check issues together (hundreds on a filter of many
 * shards) leave in one write instead of one system call each. A Cluster client (no `stream`; each node has its own)
 * and anything without `cork` are left as they are.
 */
export function corkWrites(client: unknown): () => void {
  const stream = (client as { stream?: { cork?: unknown; uncork?: unknown } }).stream
  if (stream === undefined || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function') return () => {}
  const { cork, uncork } = stream as { cork: () => void; uncork: () => void }
  cork.call(stream)
  return () => uncork.call(stream)
}

/** The part of ioredis's MULTI builder that a whole-shard add, and an add with a feed, use. */
export interface RedisTransaction {
  call(command: string, ...arguments_: RedisArgument[]): RedisTransaction
  callBuffer(command: string, ...arguments_: RedisArgument[]): RedisTransaction
  set(key: RedisKey, value: RedisKey, expiryMode: 'PX', milliseconds: number): RedisTransaction
  getrangeBuffer(key: RedisKey, start: number, end: number): RedisTransaction
  eval(script: string, keyCount: number, ...keysAndArguments: RedisArgument[]): RedisTransaction
  exec(): Promise<Array<[error: Error | null, result: unknown]> | null>
}

const IOREDIS_CLIENT = "an ioredis client: new Redis(…) or new Cluster(…) from 'ioredis' (5.9 or later, or 6)"

/**
 * The `redis` argument of every entry point, checked: an ioredis client (by its methods: the app's
 * ioredis may be another copy than ours).
 * @throws BloomError `BLOOM_INVALID_PARAMETER` for anything else, naming node-redis when it is one.
 */
export function checkClient(redis: unknown): RedisClient {
  const client = redis as Partial<Record<keyof RedisClient | 'isOpen' | 'connect', unknown>> | null
  if (client === null || typeof client !== 'object') throw invalidParameter('redis', IOREDIS_CLIENT, redis)
  const methods = ['sendCommand', 'eval', 'callBuffer', 'defineCommand'] as const
  if (methods.every((method) => typeof client[method] === 'function') && typeof client.options === 'object') return client as RedisClient
  // node-redis (the `redis` package) also has sendCommand and eval, but its own argument and reply
  // shapes: it would fail later with Lua errors that look like a store outage. Say so now.
  if (typeof client.isOpen === 'boolean' && typeof client.connect === 'function') {
    throw new BloomError(
      'BLOOM_INVALID_PARAMETER',
      `redis must be ${IOREDIS_CLIENT}; got a node-redis client (the 'redis' package), which bloomkit does not drive: create an ioredis client for the same server instead`,
    )
  }
  throw invalidParameter('redis', IOREDIS_CLIENT, redis)
}

