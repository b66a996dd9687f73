import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs'
import { open, readFile, rename, rm, unlink } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { BloomError, BloomFilter, type CountingBloomFilter, type FilterParameters } from '@bloomkit/core'
import { decodeSnapshot, KeyHasher, snapshotFormat, type SnapshotKind, SnapshotReader } from '@bloomkit/core/store'
import type { CountingLevelFilter } from '@bloomkit/level-backend'
import { MemoryBitStore } from '@bloomkit/memory-backend'
import { CountingMemoryFilter, MemoryCounterStore } from '@bloomkit/memory-backend/counting'
import type { RedisBloomFilter, RedisClient, RedisCountingFilter } from '@bloomkit/redis-backend'
import { levelBackend, redisBackend } from './backends.js'
import { clearFileDebris, clearLevelDebris, tempFileOf } from './debris.js'
import { CliError } from './errors.js'
import { fillStats } from './filter-stats.js'
import { checkInterrupted } from './signals.js'
import { backendKind } from './snapshot-kind.js'
import { closeRedis, connectRedis, type Target } from './targets.js'

const { COUNTING_SNAPSHOT_VERSION } = snapshotFormat

/** Options shared by commands that open targets. */
export interface StoreOptions {
  /** The Redis filter's name (`--name`); required for Redis targets. */
  readonly name?: string
  /** Milliseconds per Redis command and connection (`--timeout`). */
  readonly timeout: number
}

/** A filter opened for reading, whatever holds it. */
export interface OpenedFilter {
  readonly filter: BloomFilter
  /** A counting filter (docs/SPEC.md, section 10): the same filter, with `remove`; undefined for a plain one. */
  readonly counting?: CountingBloomFilter
  /** Set bits per shard (for a counting filter, non-zero counters), read in one pass. */
  setBits(): Promise<number[]>
  /** The snapshot, streamed (a file is read as it is; others through `exportChunks`); a counting filter's is version 3. */
  chunks(): AsyncIterable<Uint8Array>
  /** Redis only: TTL in seconds (null: none), and the keys that hold the filter. */
  redis?: { ttl(): Promise<number | null>; keys(): string[]; state(): Promise<string> }
  close(): Promise<void>
}

/** The Redis name for a target: `--name`, required. */
export function requireName(name: string | undefined, flag = '--name'): string {
  if (name === undefined || name === '') throw new CliError('CLI_USAGE', `a Redis target needs ${flag} <filter>`)
  return name
}

/**
 * Opens the filter at `target` for reading.
 * @throws CliError `CLI_TARGET` (file or folder missing, Redis unreachable); BloomError from the
 *   backend (`BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_SNAPSHOT`, `BLOOM_LOCKED`, …).
 */
export async function openFilter(target: Target, options: StoreOptions): Promise<OpenedFilter> {
  if (target.kind === 'file') {
    if (existsSync(target.path) && statSync(target.path).isDirectory()) throw folderNotFile(target.path)
    let bytes: Uint8Array
    try {
      bytes = await readFile(target.path)
    } catch (error) {
      throw new CliError('CLI_TARGET', `snapshot file "${target.path}" cannot be read`, { cause: error })
    }
    if (bytes.length >= 6 && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).readUInt16LE(4) === COUNTING_SNAPSHOT_VERSION) {
      const { parameters, payload } = decodeSnapshot(bytes, 'counting')
      const store = new MemoryCounterStore(parameters, payload)
      const filter = new CountingMemoryFilter(store, new KeyHasher(parameters.seed))
      return { filter, counting: filter, setBits: async () => filter.countSetBits(), chunks: () => fileChunks(target.path), close: async () => filter.close() }
    }
    const { parameters, payload } = decodeSnapshot(bytes)
    const store = new MemoryBitStore(parameters, payload)
    const filter = new BloomFilter(store, new KeyHasher(parameters.seed))
    return {
      filter,
      setBits: async () => filter.countSetBits(),
      chunks: () => fileChunks(target.path),
      close: async () => filter.close(),
    }
  }
  if (target.kind === 'level') {
    if (!existsSync(target.folder)) throw new CliError('CLI_TARGET', `folder "${target.folder}" does not exist`)
    const { LevelBloomFilter } = await levelBackend()
    const filter = await LevelBloomFilter.open(target.folder)
    if (filter.kind === 'layered') return refuseLayered(filter, `folder "${target.folder}"`)
    if (filter.kind === 'counting') return openedCounting(filter)
    return {
      filter,
      setBits: async () => filter.countSetBits(),
      chunks: () => filter.exportChunks(),
      close: () => filter.close(),
    }
  }
  const name = requireName(options.name)
  const client = await connectRedis(target, options)
  try {
    const opened = await openRedisFilter(client, name, options.timeout)
    return {
      ...opened,
      close: async () => {
        await opened.close()
        await closeRedis(client)
      },
    }
  } catch (error) {
    await closeRedis(client)
    throw error
  }
}

/** A filter in Redis, opened on a client its caller keeps (`close` closes the filter only). */
export interface OpenedRedisFilter extends OpenedFilter {
  readonly kind: SnapshotKind
  /** A plain filter as the library's class, for a rebuild in place; undefined for a counting one. */
  readonly plain?: RedisBloomFilter
}

/**
 * Opens the filter `name` on `client`, whatever kind it is: one open, which reads its meta once.
 * @throws CliError `CLI_TARGET` for a layered filter; BloomError from the backend (`BLOOM_NOT_FOUND`, …).
 */
export async function openRedisFilter(client: RedisClient, name: string, timeout: number): Promise<OpenedRedisFilter> {
  const { RedisBloomFilter } = await redisBackend()
  const filter = await RedisBloomFilter.open(client, name, { timeout, lockWait: 0 })
  if (filter.kind === 'layered') return refuseLayered(filter, `Redis filter "${name}"`)
  if (filter.kind === 'counting') {
    const counting = filter
    return {
      ...openedCounting(counting),
      kind: 'counting',
      redis: {
        // The meta hash carries the TTL, as for a plain filter.
        ttl: async () => {
          const ms = Number(await client.pttl(counting.keys[0]!))
          return ms < 0 ? null : ms / 1000
        },
        keys: () => counting.keys,
        state: async () => String((await counting.info())?.state),
      },
    }
  }
  return {
    filter,
    kind: 'plain',
    plain: filter,
    setBits: async () => filter.countSetBits(),
    chunks: () => filter.exportChunks(),
    redis: {
      ttl: () => filter.ttl(),
      keys: () => filter.keys,
      state: async () => (await filter.info()).state,
    },
    close: () => filter.close(),
  }
}

/**
 * Closes a layered (scalable or expiring) filter that a target turned out to hold, and refuses it:
 * the command line reads, builds and moves fixed and counting filters only.
 */
async function refuseLayered(filter: { close(): Promise<void> }, what: string): Promise<never> {
  await filter.close()
  throw new CliError('CLI_TARGET', `${what} holds a layered (scalable or expiring) filter; bloomkit's commands work on fixed and counting filters`)
}

/** An opened LevelDB or Redis counting filter. */
function openedCounting(filter: CountingLevelFilter | RedisCountingFilter): OpenedFilter {
  return {
    filter,
    counting: filter,
    setBits: async () => filter.countSetBits(),
    chunks: () => filter.exportChunks(),
    close: () => filter.close(),
  }
}

/** A file target that is a folder: most likely a LevelDB folder named without `level:`. */
export function folderNotFile(path: string): CliError {
  const leveldb = existsSync(join(path, 'CURRENT'))
  return new CliError('CLI_TARGET', `"${path}" is a folder, not a snapshot file${leveldb ? ' (a LevelDB folder)' : ''}; for a LevelDB folder write level:${path}`)
}

async function* fileChunks(path: string): AsyncGenerator<Uint8Array> {
  try {
    yield* createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>
  } catch (error) {
    throw new CliError('CLI_TARGET', `snapshot file "${path}" cannot be read`, { cause: error })
  }
}

/**
 * Runs `consume` over `source`; an error the source itself threw (bad input, an incomplete input,
 * an interruption) is rethrown as it was, not as a store's wrapping of it ("cannot be imported
 * into: …" with the store's code), so the user sees the input's code.
 */
export async function consuming<T, R>(source: AsyncIterable<T>, consume: (source: AsyncIterable<T>) => Promise<R>): Promise<R> {
  let failed = false
  let sourceError: unknown
  const watched = (async function* () {
    try {
      yield* source
    } catch (error) {
      failed = true
      sourceError = error
      throw error
    }
  })()
  try {
    return await consume(watched)
  } catch (error) {
    throw failed ? sourceError : error
  }
}

/** Passes the chunks on while checking them as a snapshot of `kind`; throws at the end unless length and CRCs hold. */
export async function* verified(chunks: AsyncIterable<Uint8Array>, kind: SnapshotKind = 'plain'): AsyncGenerator<Uint8Array> {
  const reader = new SnapshotReader(kind)
  for await (const chunk of chunks) {
    reader.push(chunk)
    yield chunk
  }
  reader.finish()
}

/** Whether a write may replace what is already at its target. */
export interface Replacing {
  readonly replace: boolean
}

/**
 * Writes a snapshot to `path` through a temporary file beside it, renamed over `path` only once
 * every chunk is written and flushed: a failure (bad input, full disk, interruption) leaves `path`
 * as it was.
 * @throws CliError `CLI_TARGET` if `path` exists and `replace` is false, or cannot be written.
 */
export async function writeSnapshotFile(path: string, chunks: AsyncIterable<Uint8Array>, { replace }: Replacing): Promise<void> {
  if (!replace && existsSync(path)) throw new CliError('CLI_TARGET', `"${path}" exists; pass --replace to overwrite it`)
  if (existsSync(path) && statSync(path).isDirectory()) throw folderNotFile(path)
  await clearFileDebris(path)
  const temp = tempFileOf(path)
  let handle
  try {
    handle = await open(temp, 'wx')
  } catch (error) {
    throw new CliError('CLI_TARGET', `cannot write "${path}"`, { cause: error })
  }
  try {
    for await (const chunk of chunks) {
      try {
        await handle.write(chunk)
      } catch (error) {
        throw new CliError('CLI_TARGET', `cannot write "${path}"`, { cause: error })
      }
    }
    await handle.sync()
    await handle.close()
    checkInterrupted()
    await rename(temp, path)
  } catch (error) {
    await handle.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
}

function folderInUse(folder: string): boolean {
  return existsSync(folder) && (!statSync(folder).isDirectory() || readdirSync(folder).length > 0)
}

/**
 * Imports a snapshot into a LevelDB folder: always into a new folder beside it (`<folder>.new-PID`),
 * moved into place by renames only once the import succeeded (and no signal came), so a failed or
 * interrupted build leaves the target as it was and no half-imported folder under its name.
 * @throws CliError `CLI_TARGET` if the folder holds data and `replace` is false.
 */
export async function writeLevel(folder: string, snapshot: AsyncIterable<Uint8Array>, { replace, kind }: Replacing & SnapshotOf): Promise<void> {
  await clearLevelDebris(folder)
  const inUse = folderInUse(folder)
  if (inUse && !replace) throw new CliError('CLI_TARGET', `level:${folder} already holds data; pass --replace to replace the filter in it`)
  // Only replace what is a filter, of either kind (and not open elsewhere): open fails otherwise.
  if (inUse) await (await openFilter({ kind: 'level', folder, text: `level:${folder}` }, { timeout: 0 })).close()
  const staging = `${resolve(folder)}.new-${process.pid}`
  const old = `${resolve(folder)}.old-${process.pid}`
  try {
    const { LevelBloomFilter } = await levelBackend()
    // The backend's import reads the snapshot's kind (and refuses another than the one built).
    await consuming(snapshot, async (source) => (await LevelBloomFilter.import(staging, source, { kind: backendKind(kind) })).close())
    checkInterrupted()
  } catch (error) {
    await rm(staging, { recursive: true, force: true })
    throw error
  }
  if (inUse) await rename(folder, old)
  else await rm(folder, { recursive: true, force: true }) // an empty folder, or none
  await rename(staging, folder)
  if (inUse) await rm(old, { recursive: true, force: true })
}

/** The kind of snapshot a write takes: the one its caller built or read (`plain` or `counting`). */
export interface SnapshotOf {
  readonly kind: SnapshotKind
}

/** What `build --replace` needs to know of the filter it replaces. */
export interface StoredFilter {
  readonly parameters: FilterParameters
  /** Whether it is a counting filter. */
  readonly kind: SnapshotKind
  /** Distinct keys it holds, estimated from its set bits (when asked for). */
  readonly estimatedCount?: number
}

/**
 * The filter stored at a target, if there is one: its parameters (kept by `build --replace`
 * without sizing flags) and, with `count`, its estimated key count (one pass over its bits).
 */
export async function storedFilter(target: Target, options: StoreOptions, { count }: { readonly count: boolean }): Promise<StoredFilter | undefined> {
  if (target.kind === 'file' && !existsSync(target.path)) return undefined
  if (target.kind === 'level' && !folderInUse(target.folder)) return undefined
  try {
    const opened = await openFilter(target, options)
    try {
      return await storedOf(opened, { count })
    } finally {
      await opened.close()
    }
  } catch (error) {
    if (error instanceof BloomError && error.code === 'BLOOM_NOT_FOUND') return undefined
    throw error
  }
}

/** What `build --replace` needs to know of an opened filter; with `count`, one pass over its bits. */
export async function storedOf(opened: OpenedFilter, { count }: { readonly count: boolean }): Promise<StoredFilter> {
  const parameters = opened.filter.parameters
  const kind: SnapshotKind = opened.counting === undefined ? 'plain' : 'counting'
  if (!count) return { parameters, kind }
  return { parameters, kind, estimatedCount: fillStats(parameters, await opened.setBits()).estimatedCount }
}
