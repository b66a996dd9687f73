// The parent's side of replica-worker.mjs: one child process holding a filter instance, its
// requests answered by id, killable at any moment (its pending requests then end as 'KILLED').
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { RedisAddress } from '../../../../test-support/redis-servers.js'

const packageDir = fileURLToPath(new URL('../..', import.meta.url))

/** What a worker answers a request with. */
export interface WorkerReply {
  readonly answers?: boolean[]
  readonly status?: { readonly loads: number; readonly entriesApplied: number; readonly barriers: number } | null
  /** A BloomError's code, 'UNCODED', or 'KILLED' (the process died first). */
  readonly error?: string
  readonly message?: string
}

/** How a worker opens the filter. */
export interface WorkerSpec {
  readonly cluster: boolean
  readonly nodes: readonly RedisAddress[]
  readonly name: string
  /** false: every call asks Redis; true: a strict replica; { maxStaleness }: a bounded one. */
  readonly replica: false | true | { readonly maxStaleness: number }
}

/** One replica-worker.mjs process. */
export class WorkerProcess {
  readonly spec: WorkerSpec
  /** Resolves once the worker has tried its first open (it opens again on its own when needed). */
  readonly ready: Promise<void>
  private readonly child: ChildProcess
  private readonly pending = new Map<number, (reply: WorkerReply) => void>()
  private nextId = 0
  private dead = false

  constructor(spec: WorkerSpec) {
    this.spec = spec
    this.child = spawn('node', ['test/support/replica-worker.mjs', JSON.stringify(spec)], { cwd: packageDir, stdio: ['pipe', 'pipe', 'inherit'] })
    this.child.stdin!.on('error', () => {})
    let started!: () => void
    let failed!: (error: Error) => void
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve
      failed = reject
    })
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const reply = JSON.parse(line) as WorkerReply & { id?: number; ready?: boolean }
      if (reply.ready === true) return started()
      const settle = this.pending.get(reply.id!)
      this.pending.delete(reply.id!)
      settle?.(reply)
    })
    this.child.once('exit', (code, signal) => {
      this.dead = true
      failed(new Error(`worker exited (${code ?? signal}) before it was ready`))
      for (const settle of this.pending.values()) settle({ error: 'KILLED' })
      this.pending.clear()
    })
  }

  get alive(): boolean {
    return !this.dead
  }

  /** Sends a request; resolves with its reply (never rejects). */
  request(op: 'add' | 'has' | 'status', keys: readonly string[] = [], { singles = false } = {}): Promise<WorkerReply> {
    if (this.dead) return Promise.resolve({ error: 'KILLED' })
    const id = this.nextId++
    return new Promise((resolve) => {
      this.pending.set(id, resolve)
      this.child.stdin!.write(JSON.stringify({ id, op, keys, singles }) + '\n')
    })
  }

  /** SIGKILL, as a crash would. */
  kill(): void {
    this.child.kill('SIGKILL')
  }

  /** Closes its stdin (it closes its filter and exits) and waits for it to go. */
  async end(): Promise<void> {
    if (this.dead) return
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()))
    this.child.stdin!.end()
    const timer = setTimeout(() => this.kill(), 5000)
    await exited
    clearTimeout(timer)
  }
}
