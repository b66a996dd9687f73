// A batch's own connection to a Redis node. ioredis turns every reply into JS values (one per bit
// of a BITFIELD reply, ~170 ns each in ioredis 6) and every command into an object with its own
// promise; a batch of 1 000 keys is thousands of replies. Over this connection a batch leaves as
// one buffer of RESP bytes encoded by the store, and its replies are read straight from the
// received bytes. The connection itself is opened by ioredis, with the user's own options
// (`duplicate()`: address, TLS, AUTH, database, sentinels), and handed over once it is ready.
import { BloomError } from '@bloomkit/core'
import { corkWrites, isCluster, masterOfSlot, type RedisClient } from './client.js'
import { replyEnd } from './resp-reader.js'

/** What one request's replies arrived as: `data[start … end)` holds them all, in order. */
export interface Replies {
  readonly data: Buffer
  readonly start: number
  readonly end: number
}

interface Pending {
  /** Top-level replies still expected. */
  left: number
  /** Where this request's first reply begins in the receive buffer. */
  start: number
  readonly resolve: (replies: Replies) => void
  readonly reject: (error: unknown) => void
  readonly timer: ReturnType<typeof setTimeout> | undefined
}

/** Options that make a duplicate a plain connection: no retries, no queue, no reconnection. */
const CONNECTION_OPTIONS = {
  lazyConnect: true,
  enableOfflineQueue: false,
  enableAutoPipelining: false,
  autoResendUnfulfilledCommands: false,
  autoResubscribe: false,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
  reconnectOnError: () => false,
}

/** The part of an ioredis client (standalone, or a Cluster's node) a connection is made from. */
interface Duplicable {
  duplicate(options: object): Connector
}

interface Connector {
  readonly stream?: NodeJS.ReadWriteStream & { destroyed?: boolean; ref?: () => void; unref?: () => void; on(event: string, listener: (...args: unknown[]) => void): unknown }
  readonly commandQueue?: { length: number }
  connect(): Promise<void>
  disconnect(): void
  on(event: string, listener: (...args: unknown[]) => void): unknown
}

/**
 * One connection to one node, used only by batches: each request is one write and a known
 * number of replies, answered in order (Redis answers a connection's commands in order).
 */
export class BatchConnection {
  private readonly connector: Connector
  private readonly stream: NonNullable<Connector['stream']>
  private readonly pending: Pending[] = []
  private buffer: Buffer = Buffer.alloc(0)
  /** Where the unread part of {@link buffer} begins (the first pending request's next reply). */
  private at = 0
  private dead: unknown = undefined
  private readonly onDead: () => void

  private constructor(connector: Connector, onDead: () => void) {
    this.connector = connector
    this.stream = connector.stream!
    this.onDead = onDead
    // ioredis's own reader goes: nothing else is sent through the client any more.
    this.stream.removeAllListeners('data')
    this.stream.on('data', (chunk) => this.received(chunk as Buffer))
    this.stream.on('close', () => this.fail(new Error('the connection closed')))
    this.stream.on('error', (error) => this.fail(error))
    this.stream.unref?.()
  }

  /** Opens a connection with `source`'s options; rejects if it cannot (the caller falls back). */
  static async open(source: Duplicable, onDead: () => void): Promise<BatchConnection> {
    const connector = source.duplicate(CONNECTION_OPTIONS)
    connector.on('error', () => {})
    try {
      await connector.connect()
      // Handshake commands (CLIENT SETNAME, SELECT …) still answering: let them finish first.
      for (let i = 0; i < 100 && (connector.commandQueue?.length ?? 0) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 1))
      if ((connector.commandQueue?.length ?? 0) > 0 || connector.stream === undefined) throw new Error('the connection did not settle')
    } catch (error) {
      connector.disconnect()
      throw error
    }
    return new BatchConnection(connector, onDead)
  }

  get alive(): boolean {
    return this.dead === undefined
  }

  /** Holds the requests written until the returned function is called, so that they leave in one write. */
  cork(): () => void {
    return corkWrites({ stream: this.stream })
  }

  /**
   * Writes `bytes` (complete RESP commands) and resolves with the bytes of their `replies`
   * replies, or rejects after `timeout` ms (the connection is then closed: its replies would
   * arrive out of step). `written` is called once `bytes` are no longer needed.
   */
  request(bytes: Uint8Array, replies: number, timeout: number, what: string, written?: () => void): Promise<Replies> {
    if (this.dead !== undefined) return Promise.reject(unavailable(what, this.dead))
    return new Promise<Replies>((resolve, reject) => {
      const timer = Number.isFinite(timeout)
        ? setTimeout(() => this.fail(new BloomError('BLOOM_STORE_UNAVAILABLE', `${what}: no reply from Redis within ${timeout} ms (is the server reachable?)`)), timeout)
        : undefined
      if (this.pending.length === 0) this.stream.ref?.()
      this.pending.push({ left: replies, start: -1, resolve, reject, timer })
      this.stream.write(bytes, written)
    })
  }

  close(): void {
    this.fail(new Error('closed'))
  }

  private received(chunk: Buffer): void {
    // Bytes of the first request's replies that came in earlier chunks are kept with the new ones.
    const head = this.pending[0] as Pending | undefined
    const keep = head !== undefined && head.start >= 0 ? head.start : this.at
    if (keep >= this.buffer.length) {
      this.buffer = chunk
    } else {
      this.buffer = Buffer.concat([this.buffer.subarray(keep), chunk])
    }
    this.at = Math.max(0, this.at - keep)
    if (head !== undefined && head.start >= 0) head.start = 0
    const data = this.buffer
    while (this.pending.length > 0) {
      const request = this.pending[0]
      if (request.start < 0) request.start = this.at
      while (request.left > 0) {
        const end = replyEnd(data, this.at)
        if (end < 0) return
        this.at = end
        request.left--
      }
      this.pending.shift()
      clearTimeout(request.timer)
      if (this.pending.length === 0) this.stream.unref?.()
      request.resolve({ data, start: request.start, end: this.at })
    }
    if (this.at < data.length) this.fail(new Error('Redis sent a reply nobody asked for'))
  }

  private fail(error: unknown): void {
    if (this.dead !== undefined) return
    this.dead = error
    for (const request of this.pending.splice(0)) {
      clearTimeout(request.timer)
      request.reject(error instanceof BloomError ? error : unavailable('batch', error))
    }
    this.connector.disconnect()
    this.onDead()
  }
}

function unavailable(what: string, cause: unknown): BloomError {
  if (cause instanceof BloomError) return cause
  return new BloomError('BLOOM_STORE_UNAVAILABLE', `${what}: Redis failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
}

/** After a connection could not be opened, how long batches take the client's own path (ms). */
const RETRY_AFTER_MS = 1000

/**
 * The batch connections of one client: one per node (standalone: one), opened on first use and
 * again after one is lost; all closed when the client ends. Shared by every filter on the client.
 */
export class BatchConnections {
  private readonly client: RedisClient
  private readonly open = new Map<string, Promise<BatchConnection | undefined>>()
  private readonly failedAt = new Map<string, number>()
  private ended = false
  /** Request buffers written and free again, for the next requests of any filter on the client. */
  readonly spare: Array<{ readonly buffer: Buffer; readonly view: DataView }> = []

  private constructor(client: RedisClient) {
    this.client = client
    const events = client as unknown as Connector
    events.on('end', () => {
      this.ended = true
      for (const connection of this.open.values()) void connection.then((c) => c?.close())
      this.open.clear()
    })
    // A client connected again after it ended (connect() after quit()) gets connections again.
    events.on('ready', () => {
      this.ended = false
    })
  }

  private static readonly byClient = new WeakMap<object, BatchConnections>()

  static of(client: RedisClient): BatchConnections {
    let connections = BatchConnections.byClient.get(client)
    if (connections === undefined) BatchConnections.byClient.set(client, (connections = new BatchConnections(client)))
    return connections
  }

  /** Whether the client is a Cluster. */
  get cluster(): boolean {
    return isCluster(this.client)
  }

  /**
   * The node serving `slot` on a Cluster ("host:port", from the client's slot map), or undefined
   * when unknown; on a standalone client, '' (its one node).
   */
  nodeOf(slot: number): string | undefined {
    if (!this.cluster) return ''
    return masterOfSlot(this.client, slot)
  }

  /** The open connection to `node`, opening it if needed; undefined while it cannot be opened. */
  get(node: string): Promise<BatchConnection | undefined> | BatchConnection | undefined {
    const current = this.open.get(node)
    if (current !== undefined) return current
    if (this.ended || Date.now() - (this.failedAt.get(node) ?? -Infinity) < RETRY_AFTER_MS) return undefined
    const source = this.sourceOf(node)
    if (source === undefined) return undefined
    const opening = BatchConnection.open(source, () => {
      if (this.open.get(node) === opening) this.open.delete(node)
    }).then(
      (connection) => connection,
      () => {
        this.failedAt.set(node, Date.now())
        if (this.open.get(node) === opening) this.open.delete(node)
        return undefined
      },
    )
    this.open.set(node, opening)
    return opening
  }

  private sourceOf(node: string): Duplicable | undefined {
    const client = this.client as unknown as Duplicable & { status?: string; nodes?: (role: string) => Array<Duplicable & { options: { host?: string; port?: number } }> }
    if (!this.cluster) return client.status === 'ready' ? client : undefined
    return client.nodes?.('master').find((n) => `${n.options.host}:${n.options.port}` === node)
  }
}
