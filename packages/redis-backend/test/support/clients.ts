import { Cluster, Redis } from 'ioredis'
import { afterAll, expect, inject, vi } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { KeyNames } from '../../src/layout/key-names.js'
import type { RedisClient } from '../../src/wire/client.js'

/**
 * Client options that never hang: a command fails fast while the server is down (the store's
 * own timeout is the backstop), and reconnection keeps trying in the background.
 */
export const fastFail = {
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  retryStrategy: (times: number) => Math.min(times * 50, 500),
} as const

/** A client of the shared standalone server; the test must quit it. */
export function standaloneClient(options: Record<string, unknown> = {}): Redis {
  const { host, port } = inject('redisStandalone')
  const redis = new Redis({ host, port, ...fastFail, ...options })
  redis.on('error', () => {})
  return redis
}

/** A client of the shared Cluster; the test must quit it. */
export function clusterClient(): Cluster {
  const cluster = new Cluster(inject('redisCluster'), {
    redisOptions: fastFail,
    clusterRetryStrategy: (times: number) => (times > 20 ? null : 100),
    enableOfflineQueue: true,
  })
  cluster.on('error', () => {})
  return cluster
}

let counter = 0
/** A filter name no other test (or run) uses. */
export function uniqueName(what: string): string {
  return `test:${what}:${process.pid}:${Date.now().toString(36)}:${counter++}`
}

/** The BloomError a promise rejects with (fails the test if it resolves or rejects with anything else). */
export async function errorOf(promise: Promise<unknown>): Promise<BloomError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(BloomError)
  return error as BloomError
}

/** The Redis key names of a filter (the documented format), for tests that look at or damage its keys. */
export function namesOf(filter: { readonly name: string; readonly parameters: { readonly shards: number } }): KeyNames {
  return new KeyNames(filter.name, filter.parameters.shards)
}

/**
 * The ways a batch reaches Redis, as store options, so that behaviour tests run on each: over the
 * batch connections (the default) block reads (the default for the blocked layout) and BITFIELD
 * per bit; the same through the client's own connection (block reads by script); and whole-shard
 * reads and ORs.
 */
export const PATHS = [
  ['block reads', { scanBytesPerKey: 0 }],
  ['BITFIELD', { scanBytesPerKey: 0, blockReads: false }],
  ['block reads, client connection', { scanBytesPerKey: 0, batchConnection: false }],
  ['BITFIELD, client connection', { scanBytesPerKey: 0, blockReads: false, batchConnection: false }],
  ['whole shards', { scanBytesPerKey: 2 ** 31 - 1 }],
] as const

/** The names of the commands `body` makes `client` send. */
export async function commandsOf(client: RedisClient, body: () => Promise<unknown>): Promise<string[]> {
  const spy = vi.spyOn(client, 'sendCommand')
  try {
    await body()
    return spy.mock.calls.map(([command]) => (command as { name: string }).name)
  } finally {
    spy.mockRestore()
  }
}

/**
 * The names (lower case) of the commands `body` makes `client` send whose first argument is `key`:
 * e.g. how often an open reads a filter's meta hash.
 */
export async function commandsOnKey(client: RedisClient, key: string, body: () => Promise<unknown>): Promise<string[]> {
  const spy = vi.spyOn(client, 'sendCommand')
  try {
    await body()
    return spy.mock.calls
      .map(([command]) => command as unknown as { name: string; args: unknown[] })
      .filter((command) => String(command.args[0]) === key)
      .map((command) => command.name.toLowerCase())
  } finally {
    spy.mockRestore()
  }
}

/**
 * A standalone and a Cluster client for a test file, closed after its tests, and the two as
 * `[label, client]` pairs for `test.each`.
 */
export function bothDeployments() {
  const redis = standaloneClient()
  const cluster = clusterClient()
  afterAll(async () => {
    await Promise.all([redis.quit(), cluster.quit()])
  })
  const deployments = [
    ['standalone', redis],
    ['Cluster', cluster],
  ] as const
  return { redis, cluster, deployments }
}
