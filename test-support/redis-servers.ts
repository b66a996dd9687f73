import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Where a throwaway server listens. */
export interface RedisAddress {
  readonly host: string
  readonly port: number
}

/** A throwaway `redis-server` started by {@link startRedisServer}. */
export interface RedisServerHandle extends RedisAddress {
  /** The redis-server process id. */
  readonly pid: number
  /** Stops the server (SIGTERM through its wrapper) and deletes its folder; idempotent. */
  stop(): Promise<void>
  /** Kills the server with SIGKILL, as a crash would; its folder stays for a restart. */
  kill(): Promise<void>
}

/** A throwaway Redis Cluster started by {@link startRedisCluster}. */
export interface RedisClusterHandle {
  /** The masters, one per node. */
  readonly nodes: readonly RedisAddress[]
  /** Stops every node; idempotent. */
  stop(): Promise<void>
}

/** A loopback port that was free a moment ago (the OS picks it; never a fixed port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

// The wrapper kills redis-server when its stdin closes, i.e. when the Node process that started
// it exits for any reason (even SIGKILL), so a killed test runner leaves no server behind.
const WRAPPER = 'exec 3<&0; redis-server "$@" & pid=$!; echo "wrapper-pid $pid"; (cat <&3 >/dev/null; kill $pid 2>/dev/null) & wait $pid 2>/dev/null'

/**
 * Starts `redis-server` on a free loopback port with nothing saved to disk, and resolves once it
 * accepts connections. Needs Debian's `redis-server` on the PATH.
 *
 * @param options.port A port to reuse (e.g. to restart a killed server); default: a free one.
 * @param options.args Extra arguments, e.g. `['--cluster-enabled', 'yes']`.
 */
export async function startRedisServer(options: { port?: number; dir?: string; args?: string[] } = {}): Promise<RedisServerHandle> {
  const port = options.port ?? (await freePort())
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'bloomkit-redis-')))
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir, ...(options.args ?? [])]
  const child = spawn('sh', ['-c', WRAPPER, 'sh', ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const pid = await waitForReady(child, port)
  const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())))
  let stopped = false
  return {
    host: '127.0.0.1',
    port,
    pid,
    async stop() {
      if (!stopped) {
        stopped = true
        child.stdin!.end()
        await exited
      }
      await rm(dir, { recursive: true, force: true })
    },
    async kill() {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
      stopped = true
      child.stdin!.end()
      await exited
    },
  }
}

function waitForReady(child: ChildProcess, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = ''
    let pid = 0
    const timer = setTimeout(() => fail(new Error(`redis-server on port ${port} did not start within 10 s:\n${output}`)), 10_000)
    const fail = (error: Error) => {
      clearTimeout(timer)
      child.stdin?.end()
      reject(error)
    }
    child.once('error', fail)
    child.once('exit', (code) => fail(new Error(`redis-server on port ${port} exited with ${code}:\n${output}`)))
    child.stdout!.on('data', (data: Buffer) => {
      output += data.toString()
      const match = /wrapper-pid (\d+)/.exec(output)
      if (match) pid = Number(match[1])
      if (output.includes('Ready to accept connections') && pid !== 0) {
        clearTimeout(timer)
        child.removeAllListeners('exit')
        child.removeAllListeners('error')
        // Keep draining the log so the server never blocks on a full pipe.
        child.stdout!.removeAllListeners('data')
        child.stdout!.resume()
        resolve(pid)
      }
    })
  })
}

/**
 * Starts a Redis Cluster of `masters` nodes (no replicas) on free loopback ports and resolves once
 * `cluster_state:ok` on every node (about 2 s: redis-cli waits for the nodes to agree).
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const servers: RedisServerHandle[] = []
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort()
      const busPort = await freePort()
      servers.push(
        await startRedisServer({
          port,
          args: ['--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000'],
        }),
      )
    }
    const addresses = servers.map((s) => `${s.host}:${s.port}`)
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'])
    const deadline = Date.now() + 20_000
    for (const server of servers) {
      for (;;) {
        const { stdout } = await run('redis-cli', ['-h', server.host, '-p', String(server.port), 'cluster', 'info'])
        if (stdout.includes('cluster_state:ok')) break
        if (Date.now() > deadline) throw new Error(`cluster node ${server.port} not ok after 20 s:\n${stdout}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()))
    throw error
  }
  return {
    nodes: servers.map(({ host, port }) => ({ host, port })),
    async stop() {
      await Promise.all(servers.map((s) => s.stop()))
    },
  }
}
