import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { runCli, tempFolder } from './support/run-cli.js'

const folder = tempFolder()
const at = (name: string) => join(folder.path, name)
const standalone = inject('cliRedis')
const url = `redis://${standalone.host}:${standalone.port}`
const sizing = ['--capacity', '100000', '--error-rate', '0.01']
let redis: Redis

beforeAll(() => {
  writeFileSync(at('keys.txt'), Array.from({ length: 1000 }, (_, i) => `id:${i}`).join('\n'))
  writeFileSync(at('big.txt'), Array.from({ length: 500_000 }, (_, i) => `new:${i}\n`).join(''))
  redis = new Redis({ ...standalone, maxRetriesPerRequest: 1, connectTimeout: 2000 })
})
afterAll(() => {
  redis.disconnect()
  folder.remove()
})

describe('Redis faults', () => {
  test('a database number the server refuses is an error (it wrote database 0 before); one it accepts is the one written', async () => {
    const name = `faults-db-${process.pid}`
    const refused = await runCli(['build', at('keys.txt'), '--out', `${url}/99`, '--name', name, ...sizing])
    expect(refused.stderr).toMatch(/^bloomkit: redis:\/\/.*\/99: the server refuses database 99: ERR DB index is out of range \[CLI_TARGET\]\n$/)
    expect(refused.code).toBe(2)
    expect(await redis.exists(`${name}:meta`)).toBe(0)
    expect((await runCli(['build', at('keys.txt'), '--out', `${url}/3`, '--name', name, ...sizing])).code).toBe(0)
    expect(await redis.exists(`${name}:meta`)).toBe(0)
    const db3 = new Redis({ ...standalone, db: 3, maxRetriesPerRequest: 1 })
    expect(await db3.exists(`${name}:meta`)).toBe(1)
    expect((await runCli(['check', `${url}/3`, '--name', name, 'id:7'])).stdout).toBe('id:7\tpresent\n')
    expect((await runCli(['delete', `${url}/3`, '--name', name, '--yes'])).code).toBe(0)
    expect(await db3.exists(`${name}:meta`)).toBe(0)
    db3.disconnect()
  })

  test('a rebuild lock: --force is refused while the bloomkit holding it lives; SIGKILLed, the filter stays "rebuilding" until --force frees it', async () => {
    const name = `faults-lock-${process.pid}`
    const target = ['--out', url, '--name', name]
    expect((await runCli(['build', at('keys.txt'), ...target, ...sizing])).code).toBe(0)
    // A rebuild that waits on its producer: it holds the lock and its named connection.
    let holder: ReturnType<typeof import('node:child_process').spawn> | undefined
    const held = runCli(['build', '-', ...target, '--replace', '--allow-shrink'], {
      onStart: (child) => {
        holder = child
        child.stdin!.write('new:1\n')
      },
    })
    const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    for (let i = 0; i < 200 && (await filter.info()).state !== 'rebuilding'; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await filter.info()).state).toBe('rebuilding')
    const refused = await runCli(['build', at('keys.txt'), ...target, '--replace', '--force'])
    expect(refused.stderr).toMatch(/--force refused: another bloomkit is building filter "faults-lock-\d+" now \(connection from 127\.0\.0\.1:\d+\).*\[BLOOM_LOCKED\]/)
    expect(refused.code).toBe(2)
    holder!.kill('SIGKILL')
    expect((await held).code).toBe(null)
    expect((await filter.info()).state).toBe('rebuilding')
    const locked = await runCli(['build', at('keys.txt'), ...target, '--replace'])
    expect(locked.stderr).toMatch(/if the bloomkit that held it was killed, pass --force.*\[BLOOM_LOCKED\]/)
    expect(locked.code).toBe(2)
    const forced = await runCli(['build', at('keys.txt'), ...target, '--replace', '--force'])
    expect(forced.stderr).toMatch(/built .* 1,000 keys/)
    expect(forced.code).toBe(0)
    expect((await filter.info()).state).toBe('ready')
    expect(await filter.hasMany(['id:0', 'id:999'])).toEqual([true, true])
    await filter.destroy()
  })

  /**
   * A build --replace with other sizing, SIGKILLed while it imports: under --memory 4M the new
   * filter (3 shards of ~4 MiB) is built in 3 passes over a 500,000-line file, each shard imported
   * (staged) before the next pass re-reads the file, so the kill lands between pass 1 and the switch.
   */
  async function killedResize(name: string) {
    let child: ReturnType<typeof import('node:child_process').spawn> | undefined
    const run = runCli(['build', at('big.txt'), '--out', url, '--name', name, '--replace', '--allow-shrink', '--capacity', '10000000', '--error-rate', '0.01', '--memory', '4M'], {
      onStart: (started) => {
        child = started
        started.stdin!.end()
      },
    })
    for (let i = 0; i < 3000 && (await redis.hget(`${name}:meta`, 'staged')) === null; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    child!.kill('SIGKILL')
    expect((await run).code).toBe(null)
    // Killed while staging: before the switch, as the test means.
    expect(await redis.hmget(`${name}:meta`, 'staged', 'state')).toEqual(['3', 'replacing'])
  }

  test('--replace with other sizing SIGKILLed mid-import: the old filter answers as before; the next run needs --force and clears what was staged, as delete does', async () => {
    const name = `faults-resize-${process.pid}`
    const target = ['--out', url, '--name', name]
    const ids = Array.from({ length: 1000 }, (_, i) => `id:${i}`)
    expect((await runCli(['build', at('keys.txt'), ...target, ...sizing])).code).toBe(0)
    const reader = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    const oldKeys = (await redis.keys(`${name}:*`)).sort()

    // A failed input first: nothing is replaced, nothing is left.
    const short = await runCli(['build', at('keys.txt'), ...target, '--replace', '--capacity', '10000000', '--error-rate', '0.01', '--expect', '2000'])
    expect(short.stderr).toMatch(/\[CLI_INCOMPLETE\]/)
    expect(short.code).toBe(2)
    expect(new Set(await reader.hasMany(ids))).toEqual(new Set([true]))
    expect((await redis.keys(`${name}:*`)).sort()).toEqual(oldKeys)

    await killedResize(name)
    // The old filter answers as before, to the instance opened before and to a new one.
    expect(new Set(await reader.hasMany(ids))).toEqual(new Set([true]))
    expect((await runCli(['check', url, '--name', name, 'id:0', 'id:999'])).stdout).toBe('id:0\tpresent\nid:999\tpresent\n')
    const locked = await runCli(['build', at('keys.txt'), ...target, '--replace', '--capacity', '1000000', '--error-rate', '0.01'])
    expect(locked.stderr).toMatch(/if the bloomkit that held it was killed, pass --force.*\[BLOOM_LOCKED\]/)
    expect(locked.code).toBe(2)
    const forced = await runCli(['build', at('keys.txt'), ...target, '--replace', '--force', '--capacity', '1000000', '--error-rate', '0.01'])
    expect(forced.code).toBe(0)
    const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(new Set(await filter.hasMany(ids))).toEqual(new Set([true]))
    expect(await filter.has('new:0')).toBe(false)
    // Only the new filter's keys: the killed run's staged shards went with the forced run.
    expect((await redis.keys(`${name}:*`)).sort()).toEqual(filter.keys.sort())
    await expect(reader.has('id:0')).rejects.toMatchObject({ code: 'BLOOM_DATA_LOST' })

    await killedResize(name)
    expect(new Set(await filter.hasMany(ids))).toEqual(new Set([true]))
    expect((await runCli(['delete', url, '--name', name, '--yes'])).code).toBe(0)
    expect(await redis.keys(`${name}:*`)).toEqual([])
    await Promise.all([reader.close(), filter.close()])
  }, 60_000)
})
