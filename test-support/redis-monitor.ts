// MONITOR on a test's own redis-server: what commands a call makes Redis run. MONITOR sees every
// client of its server (and ioredis fails a monitor connection that meets other traffic as it
// starts), so a file that watches runs on a server of its own (startRedisServer).

/** What MONITOR needs of an ioredis client (either major version, so that test-support imports neither). */
export interface MonitorClient {
  monitor(): Promise<{ on(event: 'monitor', listener: (time: string, args: string[], source: string) => void): unknown; disconnect(): void }>
  echo(message: string): Promise<unknown>
  disconnect(): void
}

let marks = 0

/**
 * Runs `body` while MONITOR watches the server, handing `seen` each command the server runs: its
 * arguments and its source (a client's address, or `lua` for a script's). Resolves once the server
 * has run every command sent before `body` ended: an ECHO sent through `after` then, seen last.
 * @param connect A new client of the server, used for MONITOR alone (closed here).
 */
export async function watchCommands(connect: () => MonitorClient, after: MonitorClient, body: () => Promise<unknown>, seen: (args: string[], source: string) => void): Promise<void> {
  const base = connect()
  const monitor = await base.monitor()
  base.disconnect()
  const end = `end:monitor:${process.pid}:${++marks}`
  const ended = new Promise<void>((resolve) => {
    monitor.on('monitor', (_time, args, source) => {
      if (args[0]?.toLowerCase() === 'echo' && args[1] === end) resolve()
      else seen(args, source)
    })
  })
  try {
    await body()
    await after.echo(end)
    await ended
  } finally {
    monitor.disconnect()
  }
}
