import { PGlite } from '@electric-sql/pglite'
import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { startRedisServer, type RedisAddress } from '../../../../test-support/redis-servers.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The throwaway redis-server shared by the guard tests (each test uses its own names). */
    redisAddress: RedisAddress
    /** A tarball of a freshly initialised PGlite data folder: loading it takes ~2 s, initdb ~10 s here. */
    pgliteDataDir: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = join(tmpdir(), `bloomkit-guard-pglite-${process.pid}.tar`)
  const [server] = await Promise.all([startRedisServer(), initPGliteDataDir(dataDir)])
  project.provide('redisAddress', { host: server.host, port: server.port })
  project.provide('pgliteDataDir', dataDir)
  return async () => {
    await server.stop()
    await rm(dataDir, { force: true })
  }
}

/** Runs initdb once and saves the data folder (dumpDataDir does not wait for the start itself). */
async function initPGliteDataDir(path: string): Promise<void> {
  const db = new PGlite()
  await db.waitReady
  await writeFile(path, new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer()))
  await db.close()
}
