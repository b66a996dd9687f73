import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const childScript = fileURLToPath(new URL('./child.mjs', import.meta.url))

/** A running child from child.mjs: its stdout lines so far, a wait for a line, and its exit. */
export interface Child {
  readonly process: ChildProcess
  readonly lines: string[]
  /** Resolves with the first line (already seen or to come) matching `test`; rejects if the child exits first or after `ms`. */
  waitFor(test: (line: string) => boolean, ms?: number): Promise<string>
  /** Resolves when stdout is drained and the child has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
}

/**
 * Starts `node child.mjs <entry> <command> <folder> <options>`, optionally under a file-size limit
 * (`ulimit -f`, in 512-byte blocks), so that writes past it fail as on a full disk.
 */
export function runChild(entry: string, command: string, folder: string, options: object = {}, fileSizeBlocks?: number): Child {
  const args = [childScript, entry, command, folder, JSON.stringify(options)]
  const child =
    fileSizeBlocks === undefined
      ? spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn('/bin/sh', ['-c', `ulimit -f ${fileSizeBlocks} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: string[] = []
  const waiters = new Set<() => void>()
  let partial = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    const parts = (partial + text).split('\n')
    partial = parts.pop()!
    lines.push(...parts)
    for (const wake of waiters) wake()
  })
  child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => {
      if (partial) lines.push(partial)
      for (const wake of waiters) wake()
      resolve({ code, signal, stderr })
    })
  })
  let done = false
  exited.then(() => (done = true))
  const waitFor = (test: (line: string) => boolean, ms = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`child: no matching line within ${ms} ms; got ${JSON.stringify(lines.slice(-5))}`)), ms)
      const check = () => {
        const line = lines.find(test)
        if (line !== undefined) finish(undefined, line)
        else if (done) finish(new Error(`child exited without a matching line; stdout ${JSON.stringify(lines.slice(-5))}, stderr ${stderr.slice(-500)}`))
      }
      const finish = (error?: Error, line?: string) => {
        clearTimeout(timer)
        waiters.delete(check)
        if (error) reject(error)
        else resolve(line!)
      }
      waiters.add(check)
      check()
    })
  return { process: child, lines, waitFor, exited }
}
