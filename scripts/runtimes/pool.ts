import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import type { PoolOptions, PoolRunnerInitializer, PoolWorker, WorkerRequest } from 'vitest/node'
import { runtimeBinary } from './runtimes.mjs'

/** How long a worker may take to exit after SIGTERM before it is killed (vitest's own forks pool waits as long). */
const SIGKILL_AFTER_MS = 500

/**
 * Vitest's `forks` pool with another Node binary: each test file runs in a child process of Node
 * `version` (a runtime of runtimes.mjs, found when a worker starts, so that a run of other projects
 * needs no runtime fetched), started from vitest's own forks worker entry, while
 * vitest itself (collecting, transforming, reporting) stays on the Node that runs `npm test`. The
 * parent and the child talk over Node's IPC channel with V8 serialization, which reads across these
 * V8 versions (11.3 ↔ 12.4, 13.6, 14.6; checked when this was written).
 *
 * Why a pool, not `vitest run` started under each binary: the runtimes are projects of the one
 * `vitest run`, so `npm test` reports their files beside every other project's, `--project
 * runtimes-node22` runs one, and the shared workers (one per core) schedule them with the rest.
 */
export function runtimePool(version: string): PoolRunnerInitializer {
  const name = `node-${version}`
  return { name, createPoolWorker: (options) => new RuntimeWorker(name, version, options) }
}

class RuntimeWorker implements PoolWorker {
  readonly cacheFs = true
  #child: ChildProcess | undefined
  readonly #entry: string

  constructor(
    readonly name: string,
    private readonly version: string,
    private readonly options: PoolOptions,
  ) {
    this.#entry = join(options.distPath, 'workers/forks.js')
  }

  get #process(): ChildProcess {
    if (this.#child === undefined) throw new Error(`the ${this.name} worker is not running`)
    return this.#child
  }

  on(event: string, callback: (arg: unknown) => void): void {
    this.#process.on(event, callback)
  }

  off(event: string, callback: (arg: unknown) => void): void {
    this.#process.off(event, callback)
  }

  send(message: WorkerRequest): void {
    this.#process.send(message)
  }

  async start(): Promise<void> {
    if (this.#child !== undefined) return
    const { env, execArgv, project } = this.options
    const child = fork(this.#entry, [], { execPath: runtimeBinary(this.version), env, execArgv, stdio: 'pipe', serialization: 'advanced' })
    const { outputStream, errorStream } = project.vitest.logger
    // One more pipe into each of vitest's streams (as its forks pool does), without Node's warning.
    for (const [from, to] of [[child.stdout, outputStream], [child.stderr, errorStream]] as const) {
      to.setMaxListeners(to.getMaxListeners() + 1)
      from?.pipe(to, { end: false })
    }
    this.#child = child
  }

  async stop(): Promise<void> {
    const child = this.#child
    if (child === undefined) return
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())))
    const kill = setTimeout(() => child.kill('SIGKILL'), SIGKILL_AFTER_MS)
    child.kill()
    await exited
    clearTimeout(kill)
    const { outputStream, errorStream } = this.options.project.vitest.logger
    for (const [from, to] of [[child.stdout, outputStream], [child.stderr, errorStream]] as const) {
      from?.unpipe(to)
      to.setMaxListeners(to.getMaxListeners() - 1)
    }
    this.#child = undefined
  }

  deserialize(data: unknown): unknown {
    return data
  }
}
