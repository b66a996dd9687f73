// Writing a snapshot into Redis, and a build's Redis target: the name opened once (what it holds,
// its kind, and for a rebuild in place the filter itself), then the backend's import, which reads
// the snapshot's kind (once) and refuses another than the one the command built.
import { BloomError } from '@bloomkit/core'
import type { SnapshotKind } from '@bloomkit/core/store'
import type { RedisClient } from '@bloomkit/redis-backend'
import type { Cluster, Redis } from 'ioredis'
import { redisBackend } from './backends.js'
import { CliError } from './errors.js'
import { backendKind, kindName } from './snapshot-kind.js'
import { consuming, openRedisFilter, type OpenedRedisFilter, type Replacing, type SnapshotOf } from './stores.js'
import { closeRedis, connectRedis, redact, type Target } from './targets.js'

/** How {@link writeRedis} and {@link importIntoRedis} write. */
export interface RedisWrite extends Replacing, SnapshotOf {
  readonly timeout: number
  readonly ttl?: number
  readonly replaceParameters?: boolean
  readonly force?: boolean
}

/**
 * Imports a snapshot into Redis under `name` (staged in next-generation keys, swapped in shard by
 * shard only after the whole snapshot checked out). With `replaceParameters`, a filter under the
 * name with other parameters is replaced by the new one in a new generation (docs/SPEC.md 9.6).
 * The name is opened once, to learn what it holds.
 * @throws CliError `CLI_TARGET` if the name holds a filter and `replace` is false, or one of another kind.
 */
export async function writeRedis(target: Target & { kind: 'redis' }, name: string, snapshot: AsyncIterable<Uint8Array>, options: RedisWrite & { readonly label?: string }): Promise<void> {
  const client = await connectRedis(target, { timeout: options.timeout, label: options.label ?? `build:${name}` })
  try {
    await importIntoRedis(client, target, name, snapshot, { ...options, existing: await existingRedisKind(client, name, options.timeout) })
  } finally {
    await closeRedis(client)
  }
}

/**
 * {@link writeRedis} on a client the caller keeps, which knows already what the name holds
 * (`existing`: its kind, undefined for none): refused before the input is read when it holds a
 * filter and `replace` is false, or one of another kind; else the backend's import, with the kind built.
 */
export async function importIntoRedis(
  client: RedisClient,
  target: Target & { kind: 'redis' },
  name: string,
  snapshot: AsyncIterable<Uint8Array>,
  options: RedisWrite & { readonly existing: SnapshotKind | undefined },
): Promise<void> {
  const { existing, kind } = options
  if (existing !== undefined) {
    if (!options.replace) throw new CliError('CLI_TARGET', `${redact(target.url)} already holds a filter named "${name}"; pass --replace to replace it`)
    // The shards are swapped in place, and the meta's kind with them cannot be: refuse before reading the input.
    if (existing !== kind) {
      throw new CliError('CLI_TARGET', `${redact(target.url)}: "${name}" is ${kindName(existing)} and cannot be replaced by ${kindName(kind)}; delete it first (bloomkit delete), or use another name`)
    }
  }
  const { RedisBloomFilter } = await redisBackend()
  const imported = await consuming(snapshot, (source) =>
    RedisBloomFilter.import(client, name, source, {
      kind: backendKind(kind),
      timeout: options.timeout,
      lockWait: 0,
      ttl: options.ttl,
      replaceParameters: options.replaceParameters === true,
      force: options.force === true,
    }),
  )
  await imported.close()
}

/** The kind of the filter named `name` in Redis (one open), or undefined if there is none. */
async function existingRedisKind(client: RedisClient, name: string, timeout: number): Promise<SnapshotKind | undefined> {
  const opened = await openRedisFilter(client, name, timeout).catch((error: unknown) => {
    if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') return undefined
    throw error
  })
  await opened?.close()
  return opened?.kind
}

/**
 * A build's Redis target: its connection (named for the filter, so that `--force` elsewhere sees
 * this build), and the filter under its name, each made once, when first needed: the name is
 * opened once, whether the build reads its parameters, rebuilds it in place or imports over it.
 */
export class RedisBuildTarget {
  private connecting: Promise<Redis | Cluster> | undefined
  private opening: Promise<OpenedRedisFilter | undefined> | undefined

  constructor(
    readonly target: Target & { kind: 'redis' },
    readonly name: string,
    private readonly timeout: number,
  ) {}

  /** The name its connection goes by (CLIENT SETNAME bloomkit-build:<filter>). */
  get label(): string {
    return `build:${this.name}`
  }

  client(): Promise<Redis | Cluster> {
    this.connecting ??= connectRedis(this.target, { timeout: this.timeout, label: this.label })
    return this.connecting
  }

  /** The filter under the name (opened once; any kind but layered), or undefined if there is none. */
  existing(): Promise<OpenedRedisFilter | undefined> {
    this.opening ??= this.client().then((client) =>
      openRedisFilter(client, this.name, this.timeout).catch((error: unknown) => {
        if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') return undefined
        throw error
      }),
    )
    return this.opening
  }

  async close(): Promise<void> {
    const opened = await this.opening?.catch(() => undefined)
    await opened?.close()
    const client = await this.connecting?.catch(() => undefined)
    if (client !== undefined) await closeRedis(client)
  }
}
