import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { CacheGuardOptions } from '@bloomkit/guard'
import type { User, UsersDb } from './users-db.js'

const worker = fileURLToPath(new URL('./guard-worker.mjs', import.meta.url))

type Message = { type: string; ref: number; id?: string; value?: unknown; code?: string; message?: string }

/** A child process running a CacheGuard (test/support/guard-worker.mjs) whose loads this process answers from `db`. */
export class GuardProcess {
  /** Ids this process asked the database for, in order. */
  readonly loads: string[] = []
  /** While true, loads are left unanswered (the instance hangs in its load, holding the key's lock). */
  holdLoads = false
  private nextRef = 0
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  private readonly exited: Promise<void>

  private constructor(private readonly child: ChildProcess, db: UsersDb) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    child.on('message', async (message: Message) => {
      if (message.type === 'load') {
        this.loads.push(message.id!)
        if (this.holdLoads) return
        try {
          child.send({ type: 'loaded', ref: message.ref, row: await db.user(message.id!) })
        } catch (error) {
          child.send({ type: 'loadFailed', ref: message.ref, message: (error as Error).message })
        }
        return
      }
      const waiter = this.waiting.get(message.ref)
      this.waiting.delete(message.ref)
      if (message.type === 'result') waiter?.resolve(message.value)
      else waiter?.reject(Object.assign(new Error(message.message), { code: message.code }))
    })
  }

  /** Starts an instance and resolves once its filter is open. */
  static async start(
    db: UsersDb,
    setup: { port: number; filterName: string },
  ): Promise<GuardProcess> {
    const child = fork(worker, [JSON.stringify(setup)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const instance = new GuardProcess(child, db)
    await new Promise<void>((resolve, reject) => {
      child.once('message', (message: Message) => (message.type === 'ready' ? resolve() : reject(new Error(`unexpected ${message.type}`))))
      child.once('exit', (code) => reject(new Error(`guard worker exited with ${code}`)))
    })
    return instance
  }

  /** The instance's guard `name` (made on first use with `options`), driven from here. */
  guard(name: string, options: Partial<CacheGuardOptions<User>> = {}) {
    const guard = { name, options }
    return {
      /** `count` concurrent gets of `id` in the instance; their answers. */
      get: (id: string, count = 1) => this.call('get', { guard, id, count }) as Promise<(User | null)[]>,
      created: (id: string) => this.call('created', { guard, id }) as Promise<void>,
      invalidate: (id: string) => this.call('invalidate', { guard, id }) as Promise<void>,
      stats: () => this.call('stats', { guard }) as Promise<Record<string, number>>,
    }
  }

  /** SIGKILL, as a crash: no cleanup, no lock released. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL')
    await this.exited
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    this.child.send({ type: 'stop' })
    await this.exited
  }

  private call(op: string, args: Record<string, unknown>): Promise<unknown> {
    const ref = this.nextRef++
    return new Promise((resolve, reject) => {
      this.waiting.set(ref, { resolve, reject })
      this.child.send({ type: 'call', ref, op, ...args })
    })
  }
}
