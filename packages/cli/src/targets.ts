import type { Command } from 'commander'
import type { Cluster, Redis } from 'ioredis'
import { ioredis } from './backends.js'
import { CliError } from './errors.js'

/** Where a filter lives, as named on the command line. */
export type Target =
  /** A snapshot file (`filter.blmk`). */
  | { readonly kind: 'file'; readonly path: string; readonly text: string }
  /** A LevelDB folder (`level:<folder>`). */
  | { readonly kind: 'level'; readonly folder: string; readonly text: string }
  /** Redis (`redis://…`, `rediss://…`) or Redis Cluster (`redis+cluster://…`); the filter's name comes from `--name`. */
  | { readonly kind: 'redis'; readonly cluster: boolean; readonly url: string; readonly text: string }

const REDIS_SCHEMES = /^(rediss?)(\+cluster)?:\/\//

/**
 * Reads a target argument: `level:<folder>`, `redis://[user:pass@]host:port[/db]`,
 * `redis+cluster://host:port[,host:port…]`, or else a snapshot file's path.
 * @throws CliError `CLI_USAGE` for an empty argument or a URL that is not one of these.
 */
export function parseTarget(text: string, what: string): Target {
  if (text === '') throw new CliError('CLI_USAGE', `${what} must not be empty`)
  if (text.startsWith('level:')) {
    const folder = text.slice('level:'.length)
    if (folder === '') throw new CliError('CLI_USAGE', `${what} "level:" needs a folder, as in level:./data/ids`)
    return { kind: 'level', folder, text }
  }
  const scheme = REDIS_SCHEMES.exec(text)
  if (scheme !== null) {
    checkRedisUrl(text, what, { cluster: scheme[2] !== undefined })
    return { kind: 'redis', cluster: scheme[2] !== undefined, url: text, text }
  }
  // `localhost:6379`, `10.0.0.1:7000/2`, `[::1]:6379`: an address without its scheme, which would
  // otherwise become a file named so in the current folder.
  if (/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}(\/\d*)?$/i.test(text)) {
    throw new CliError(
      'CLI_USAGE',
      `${what} "${text}" looks like a host:port address; write redis://${text}, rediss://${text} (TLS) or redis+cluster://${text}, ` +
        `or ./${text} for a snapshot file of that name`,
    )
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    throw new CliError(
      'CLI_USAGE',
      `${what} "${text}" has an unknown scheme; expected a file path, level:<folder>, redis://host:port[/db] or redis+cluster://host:port`,
    )
  }
  return { kind: 'file', path: text, text }
}

function checkRedisUrl(text: string, what: string, { cluster }: { readonly cluster: boolean }): void {
  const bad = (why: string) => new CliError('CLI_USAGE', `${what} "${redact(text)}" is not a valid Redis URL: ${why}; expected redis://[user:pass@]host:port[/db]${cluster ? ' or redis+cluster://host:port[,host:port…]' : ''}`)
  const { hosts, path } = splitUrl(text)
  if (hosts.length === 0) throw bad('no host')
  if (!cluster && hosts.length > 1) throw bad('several hosts (use redis+cluster:// for a Cluster)')
  for (const host of hosts) {
    const port = host.port === '' ? 6379 : Number(host.port)
    if (host.host === '') throw bad('no host')
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw bad(`port "${host.port}" is not from 1 to 65535`)
  }
  if (path !== '' && path !== '/') {
    if (cluster) throw bad('a Cluster has no database number')
    const db = Number(path.slice(1))
    if (!/^\/\d+$/.test(path) || db > 65_535) throw bad(`database "${path.slice(1)}" is not a number`)
  }
}

interface UrlParts {
  readonly username: string
  readonly password: string
  readonly hosts: { host: string; port: string }[]
  readonly path: string
}

/** Splits `scheme://[user:pass@]h1:p1[,h2:p2…][/path]`; WHATWG URL cannot hold several hosts. */
function splitUrl(text: string): UrlParts {
  const rest = text.slice(text.indexOf('://') + 3)
  const slash = rest.indexOf('/')
  const authority = slash === -1 ? rest : rest.slice(0, slash)
  const path = slash === -1 ? '' : rest.slice(slash)
  const at = authority.lastIndexOf('@')
  const credentials = at === -1 ? '' : authority.slice(0, at)
  const colon = credentials.indexOf(':')
  const username = decodeURIComponent(colon === -1 ? '' : credentials.slice(0, colon))
  const password = decodeURIComponent(colon === -1 ? credentials : credentials.slice(colon + 1))
  const hosts = (at === -1 ? authority : authority.slice(at + 1))
    .split(',')
    .filter((part) => part !== '')
    .map((part) => {
      const match = /^(\[[^\]]+\]|[^:]*)(?::(.*))?$/.exec(part)!
      return { host: match[1].replace(/^\[|\]$/g, ''), port: match[2] ?? '' }
    })
  return { username, password, hosts, path }
}

/** The URL with its password replaced by `***`, for messages. */
export function redact(text: string): string {
  return text.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@')
}

/** Options of every connection the command line makes: fail fast, never hang on a dead server (NOTES.md). */
export interface ConnectOptions {
  /** Milliseconds to wait for a connection and for each command. */
  readonly timeout: number
  /**
   * What this connection works on, as `build:<filter>`: its CLIENT SETNAME is then
   * `bloomkit-build:<filter>`, so that CLIENT LIST shows which filter a connection writes and
   * `--force` can tell a live writer from a dead one ({@link liveWriters}).
   */
  readonly label?: string
}

/** The connection name for a label (CLIENT SETNAME takes no spaces or control characters). */
function connectionNameOf(label: string | undefined): string {
  return label === undefined ? 'bloomkit' : `bloomkit-${label}`.replace(/[^\x21-\x7e]/g, '_')
}

/**
 * Other connections (on every master) named for `label`: bloomkit processes working on that
 * filter now. A process that died has none: the server drops a dead client's connection.
 */
export async function liveWriters(client: Redis | Cluster, label: string): Promise<string[]> {
  const wanted = connectionNameOf(label)
  const { Cluster } = await ioredis()
  const nodes = client instanceof Cluster ? client.nodes('master') : [client]
  const found: string[] = []
  for (const node of nodes) {
    const own = String(await node.client('ID'))
    const list = String(await node.client('LIST'))
    for (const line of list.split('\n')) {
      const fields = Object.fromEntries(line.trim().split(' ').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]))
      if (fields.name === wanted && fields.id !== own) found.push(fields.addr ?? '?')
    }
  }
  return found
}

/**
 * Connects to the Redis server or Cluster a target names, failing (not retrying) if it cannot.
 * @throws CliError `CLI_TARGET` naming the URL (password hidden) and the reason.
 */
export async function connectRedis(target: Target & { kind: 'redis' }, options: ConnectOptions): Promise<Redis | Cluster> {
  const { username, password, hosts, path } = splitUrl(target.url)
  const tls = target.url.startsWith('rediss') ? {} : undefined
  const common = {
    username: username === '' ? undefined : username,
    password: password === '' ? undefined : password,
    connectTimeout: options.timeout,
    // Shown by CLIENT LIST, so an operator sees which connections are a bloomkit load.
    connectionName: connectionNameOf(options.label),
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    ...(tls === undefined ? {} : { tls }),
  }
  const nodes = hosts.map(({ host, port }) => ({ host, port: port === '' ? 6379 : Number(port) }))
  const db = path.length > 1 ? Number(path.slice(1)) : 0
  const { Cluster, Redis } = await ioredis()
  const client = target.cluster
    ? new Cluster(nodes, { lazyConnect: true, enableOfflineQueue: true, clusterRetryStrategy: () => null, slotsRefreshTimeout: options.timeout, redisOptions: common })
    : new Redis({ ...common, ...nodes[0], db, lazyConnect: true })
  // Errors reach us through the commands that fail; without a listener ioredis would print them too.
  // The first one is kept: a failed connect rejects with "Connection is closed", which hides why.
  let firstError: unknown
  client.on('error', (error: unknown) => (firstError ??= error))
  try {
    await client.connect()
    if (target.cluster) await waitForClusterReady(client as Cluster, options.timeout)
  } catch (error) {
    client.disconnect()
    throw new CliError('CLI_TARGET', `cannot connect to ${redact(target.url)}`, { cause: firstError ?? error })
  }
  // ioredis sends SELECT on connect but only logs its failure, and goes on in database 0: a build
  // reported done at /99 would have written database 0. Select again and fail on refusal.
  if (db !== 0) await selectDatabase(client as Redis, db, target)
  return client
}

async function selectDatabase(client: Redis, db: number, target: Target & { kind: 'redis' }): Promise<void> {
  try {
    await client.select(db)
  } catch (error) {
    client.disconnect()
    throw new CliError('CLI_TARGET', `${redact(target.url)}: the server refuses database ${db}`, { cause: error })
  }
}

async function waitForClusterReady(cluster: Cluster, timeout: number): Promise<void> {
  if (cluster.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Cluster was not ready within ${timeout} ms`)), timeout)
    cluster.once('ready', () => {
      clearTimeout(timer)
      resolve()
    })
    cluster.once('end', () => {
      clearTimeout(timer)
      reject(new Error('the connection to the Cluster ended'))
    })
  })
}

/** Closes a client made by {@link connectRedis}, without waiting on a dead server. */
export async function closeRedis(client: Redis | Cluster): Promise<void> {
  if (client.status === 'ready') {
    await Promise.race([client.quit().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000).unref())])
  }
  client.disconnect()
}

/**
 * Refuses Redis-only flags the user gave for a target that is not Redis (`--name` or `--ttl` on a
 * file would otherwise be ignored without a word). `flags` maps option keys to flag names.
 * @throws CliError `CLI_USAGE` naming the flag and the target.
 */
export function refuseRedisFlags(command: Command, target: Target, flags: Record<string, string>, what: string): void {
  if (target.kind === 'redis') return
  for (const [key, flag] of Object.entries(flags)) {
    if (command.getOptionValueSource(key) === 'cli') {
      throw new CliError('CLI_USAGE', `${flag} applies to Redis targets only; ${what} "${target.text}" is a ${target.kind === 'file' ? 'snapshot file' : 'LevelDB folder'}`)
    }
  }
}
