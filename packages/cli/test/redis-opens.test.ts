import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { watchCommands } from '../../../test-support/redis-monitor.js'
import { startRedisServer, type RedisServerHandle } from '../../../test-support/redis-servers.js'
import { runCli, tempFolder } from './support/run-cli.js'

// A build into Redis opens the name once (issue 34 item 2): what the CLI needs to know of the filter
// there (whether there is one, its kind, parameters and fill) is read once, on the connection that
// then rebuilds or imports, and the snapshot's kind is the one the command builds (the backend's
// import reads it, once). An open reads the meta hash with one HGETALL from the client (a script's
// reads run inside Redis): what this file counts, with MONITOR on a server of its own.

const folder = tempFolder()
const at = (file: string) => join(folder.path, file)
let server: RedisServerHandle
let redis: Redis
let url: string
let run = 0
const fresh = () => `cli-opens-${process.pid}-${++run}`
const sizing = ['--capacity', '1000', '--error-rate', '0.01']

beforeAll(async () => {
  server = await startRedisServer()
  redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1 })
  url = `redis://${server.host}:${server.port}`
  writeFileSync(at('keys.txt'), Array.from({ length: 500 }, (_, i) => `k:${i}\n`).join(''))
  writeFileSync(at('other.txt'), 'other:1\nother:2\n')
})
afterAll(async () => {
  redis.disconnect()
  await server.stop()
  folder.remove()
})

/** The HGETALLs of `name`'s meta hash that clients (not scripts) sent while `body` ran. */
async function metaReads(name: string, body: () => Promise<unknown>): Promise<number> {
  let reads = 0
  const connect = () => new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1 })
  await watchCommands(connect, redis, body, (args, source) => {
    if (args[0]?.toLowerCase() === 'hgetall' && args[1] === `${name}:meta` && source !== 'lua') reads++
  })
  return reads
}

/** Runs the CLI and expects it to succeed. */
async function ok(args: string[]): Promise<void> {
  const result = await runCli(args)
  expect(result.stderr).toMatch(/^built /)
  expect(result.code).toBe(0)
}

test.each([
  ['a plain filter, same parameters (a rebuild in place)', [], []],
  ['a plain filter, other sizing (an import that replaces the parameters)', [], ['--shards', '2']],
  ['a counting filter (an import over it)', ['--counting'], ['--counting']],
] as const)('build --replace of %s opens the name once', async (what, first, again) => {
  const name = fresh()
  await ok(['build', at('keys.txt'), '--out', url, '--name', name, ...sizing, ...first])
  const replacesParameters = (again as readonly string[]).includes('--shards')
  const reads = await metaReads(name, () => ok(['build', at('other.txt'), '--out', url, '--name', name, '--replace', '--allow-shrink', ...(replacesParameters ? sizing : []), ...again]))
  expect(reads, what).toBe(1)
  const filter = await RedisBloomFilter.open(redis, name)
  expect(await filter.hasMany(['other:1', 'other:2', 'k:0'])).toEqual([true, true, false])
  await (filter as RedisBloomFilter).destroy()
})

test('build into a free name opens it once, and a build without --replace into a taken one refuses after one open', async () => {
  const name = fresh()
  expect(await metaReads(name, () => ok(['build', at('keys.txt'), '--out', url, '--name', name, ...sizing]))).toBe(1)
  let refused = { code: 0 as number | null, stderr: '' }
  expect(await metaReads(name, async () => (refused = await runCli(['build', at('other.txt'), '--out', url, '--name', name, ...sizing])))).toBe(1)
  expect(refused.stderr).toMatch(new RegExp(`already holds a filter named "${name}"; pass --replace`))
  expect(refused.code).toBe(2)
  await RedisBloomFilter.destroy(redis, name)
})
