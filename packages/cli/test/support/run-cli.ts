import { spawn, type SpawnOptions } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The built binary: tests run what users run (`pnpm run build` first, as `npm test` does). */
export const BIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stdoutBytes: Buffer
  readonly stderr: string
}

export interface RunOptions {
  /** Bytes written to standard input (then closed); standard input is empty otherwise. */
  readonly input?: string | Uint8Array
  readonly cwd?: string
  readonly env?: NodeJS.ProcessEnv
  /**
   * Run without the power to override file permissions (root only, through util-linux's setpriv):
   * for permission tests, which root would pass anyway. The process stays root, so it still reads a
   * clone that only root may enter (a `mktemp -d` folder), as another user id could not.
   */
  readonly withoutPermissionOverride?: boolean
  /** Node's own flags, before the binary (e.g. `--import` of a loader hook). */
  readonly nodeArgs?: readonly string[]
  /** Called once the process has started, e.g. to kill a server mid-way. */
  readonly onStart?: (child: ReturnType<typeof spawn>) => void
}

/** Runs `bloomkit <args>` in a child process and collects its exit code and output. */
export function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const spawnOptions: SpawnOptions = { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] }
    const caps = '-dac_override,-dac_read_search'
    const nodeArgs = options.nodeArgs ?? []
    const child = options.withoutPermissionOverride === true
      ? spawn('setpriv', [`--inh-caps=${caps}`, `--ambient-caps=${caps}`, `--bounding-set=${caps}`, '--', process.execPath, ...nodeArgs, BIN, ...args], spawnOptions)
      : spawn(process.execPath, [...nodeArgs, BIN, ...args], spawnOptions)
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      const stdoutBytes = Buffer.concat(out)
      resolve({ code, stdout: stdoutBytes.toString('utf8'), stdoutBytes, stderr: Buffer.concat(err).toString('utf8') })
    })
    child.stdin!.on('error', () => {})
    // With onStart, the caller writes and ends standard input itself.
    if (options.onStart === undefined) child.stdin!.end(options.input ?? '')
    options.onStart?.(child)
  })
}

/** A fresh temporary folder, removed by the returned function. */
export function tempFolder(prefix = 'bloomkit-cli-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}
