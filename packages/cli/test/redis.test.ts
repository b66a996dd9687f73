import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { earlierSizeFilter } from '@bloomkit/core/store'
import { RedisBloomFilter, sizeRedisFilter } from '@bloomkit/redis-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { startRedisServer } from '../../../test-support/redis-servers.js'
import { runCli, tempFolder } from './support/run-cli.js'

const folder = tempFolder()
const at = (name: string) => join(folder.path, name)
const standalone = inject('cliRedis')
const clusterNodes = inject('cliCluster')
const url = `redis://${standalone.host}:${standalone.port}`
const clusterUrl = `redis+cluster://${clusterNodes.map((node) => `${node.host}:${node.port}`).join(',')}`
const options = { maxRetriesPerRequest: 1, connectTimeout: 2000 }
let redis: Redis
let cluster: Cluster
const keys = Array.from({ length: 200_000 }, (_, i) => `id:${i}`)
const sizing = ['--capacity', '10000000', '--error-rate', '0.01']
let run = 0
/** A filter name of its own per test. */
const fresh = () => `cli-test-${process.pid}-${++run}`

beforeAll(async () => {
  writeFileSync(at('keys.txt'), `${keys.join('\n')}\n`)
  writeFileSync(at('other.txt'), 'other:1\nother:2\n')
  writeFileSync(at('fails-late.jsonl'), `${keys.slice(0, 1000).map((key) => JSON.stringify(key)).join('\n')}\n{broken\n`)
  redis = new Redis({ ...standalone, ...options })
  cluster = new Cluster(clusterNodes, { redisOptions: options })
})
afterAll(async () => {
  redis.disconnect()
  cluster.disconnect()
  folder.remove()
})

/** The payload the library builds from `keys` with a filter's parameters. */
async function expectedPayload(parameters: RedisBloomFilter['parameters'], added: string[]): Promise<Buffer> {
  const memory = await MemoryBloomFilter.fromParameters(parameters)
  memory.addMany(added)
  return Buffer.from(memory.export().subarray(40, -4))
}

describe('bloomkit build into Redis', () => {
  test('whole shards land where addMany would put the bits, with the shards RedisBloomFilter.create picks', async () => {
    const name = fresh()
    const result = await runCli(['build', at('keys.txt'), '--out', url, '--name', name, ...sizing])
    expect(result.stderr).toMatch(/built redis:.* 200,000 keys/)
    expect(result.code).toBe(0)
    const built = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    const created = await RedisBloomFilter.create(redis, `${name}-by-library`, { capacity: 10_000_000, errorRate: 0.01, seed: built.parameters.seed })
    expect(built.parameters).toEqual(created.parameters)
    expect(built.parameters.shards).toBeGreaterThan(1)
    expect(Buffer.from((await built.export()).subarray(40, -4)).equals(await expectedPayload(built.parameters, keys))).toBe(true)
    await created.destroy()
    await built.destroy()
  })

  test('into a Cluster, then check and inspect through the CLI', async () => {
    const name = fresh()
    expect((await runCli(['build', at('keys.txt'), '--out', clusterUrl, '--name', name, '--shards', '6', ...sizing])).code).toBe(0)
    const check = await runCli(['check', clusterUrl, '--name', name, 'id:5', 'id:199999', 'nope:1'])
    expect(check.stdout).toBe('id:5\tpresent\nid:199999\tpresent\nnope:1\tabsent\n')
    expect(check.code).toBe(1)
    const inspect = await runCli(['inspect', clusterUrl, '--name', name, '--json'])
    expect(inspect.code).toBe(0)
    const report = JSON.parse(inspect.stdout)
    expect(report.parameters.shards).toBe(6)
    expect(report.keys).toHaveLength(7)
    expect(report.ttl).toBeNull()
    expect(report.state).toBe('ready')
    expect(Math.abs(report.estimatedCount - keys.length) / keys.length).toBeLessThan(0.02)
    await (await RedisBloomFilter.open(cluster, name, { kind: 'fixed' })).destroy()
  })

  test('an existing filter is kept without --replace; --replace rebuilds it atomically with the new keys only', async () => {
    const name = fresh()
    expect((await runCli(['build', at('keys.txt'), '--out', url, '--name', name, ...sizing, '--ttl', '3600'])).code).toBe(0)
    const refused = await runCli(['build', at('other.txt'), '--out', url, '--name', name, ...sizing])
    expect(refused.stderr).toMatch(new RegExp(`already holds a filter named "${name}"; pass --replace`))
    expect(refused.code).toBe(2)
    const failed = await runCli(['build', at('fails-late.jsonl'), '--format', 'jsonl', '--out', url, '--name', name, '--replace'])
    expect(failed.stderr).toMatch(/JSON line 1001 is not valid JSON/)
    expect(failed.code).toBe(2)
    const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(await filter.hasMany(['id:0', 'id:150000', 'other:1'])).toEqual([true, true, false])
    expect((await filter.info()).state).toBe('ready')
    const replaced = await runCli(['build', at('other.txt'), '--out', url, '--name', name, '--replace', '--allow-shrink'])
    expect(replaced.code).toBe(0)
    expect(await filter.hasMany(['other:1', 'other:2', 'id:0', 'id:150000'])).toEqual([true, true, false, false])
    expect(await filter.ttl()).toBeGreaterThan(3000)
    await filter.destroy()
  })

  test('--replace of a filter with shards over 4 MiB (the rebuild\'s per-bit path) keeps only the new keys', async () => {
    const name = fresh()
    expect((await runCli(['build', at('keys.txt'), '--out', url, '--name', name, ...sizing, '--shards', '1'])).code).toBe(0)
    expect((await runCli(['build', at('other.txt'), '--out', url, '--name', name, '--replace', '--allow-shrink'])).code).toBe(0)
    const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(filter.parameters.shards).toBe(1)
    expect(await filter.hasMany(['other:1', 'other:2', 'id:0', 'id:150000'])).toEqual([true, true, false, false])
    await filter.destroy()
  })

  test('--replace with other sizing, and copy --replace with another seed, switch the name to a new filter in a new generation; nothing of the old one is left', async () => {
    const name = fresh()
    expect((await runCli(['build', at('keys.txt'), '--out', url, '--name', name, '--capacity', '300000', '--error-rate', '0.01', '--ttl', '3600'])).code).toBe(0)
    const old = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(old.parameters.shards).toBe(1)
    const resized = await runCli(['build', at('other.txt'), '--out', url, '--name', name, '--replace', '--allow-shrink', ...sizing, '--shards', '4'])
    expect(resized.stderr).toMatch(/built .* 2 keys/)
    expect(resized.code).toBe(0)
    const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(filter.parameters).toMatchObject({ shards: 4, seed: old.parameters.seed })
    expect(filter.parameters.bits).toBeGreaterThan(old.parameters.bits)
    expect(await filter.hasMany(['other:1', 'other:2', 'id:0', 'id:150000'])).toEqual([true, true, false, false])
    expect(await filter.ttl()).toBeGreaterThan(3000)
    // An instance of the old filter fails (open it again) rather than answer from keys that are not its own.
    await expect(old.has('id:0')).rejects.toMatchObject({ code: 'BLOOM_DATA_LOST' })
    expect((await redis.keys(`${name}:*`)).sort()).toEqual([`${name}:meta`, ...filter.keys.slice(1)].sort())

    // copy --replace of a file built with another (random) seed and size: the copy is the filter now.
    expect((await runCli(['build', at('keys.txt'), '--out', at('seeded.blmk'), '--capacity', '300000', '--error-rate', '0.01'])).code).toBe(0)
    expect((await runCli(['copy', at('seeded.blmk'), url, '--to-name', name])).stderr).toMatch(/already holds a filter.*pass --replace/)
    const copied = await runCli(['copy', at('seeded.blmk'), url, '--to-name', name, '--replace'])
    expect(copied.code).toBe(0)
    const copy = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(copy.parameters.seed).not.toBe(filter.parameters.seed)
    expect(copy.parameters.shards).toBe(1)
    expect(await copy.hasMany(['id:0', 'id:150000'])).toEqual([true, true])
    expect((await redis.keys(`${name}:*`)).sort()).toEqual(copy.keys.sort())
    await copy.destroy()
    await Promise.all([old.close(), filter.close()])
  })

  test('--replace with the sizing flags an earlier release sized the filter by moves it to the size that meets the rate, keeping its seed (a nightly rebuild with unchanged flags)', async () => {
    const name = fresh()
    const flags = { capacity: 20_000, errorRate: 0.01 }
    const earlier = { ...sizeRedisFilter(flags, 0, earlierSizeFilter), seed: 77 }
    expect(earlier.bits).not.toBe(sizeRedisFilter(flags).bits)
    await (await RedisBloomFilter.fromParameters(redis, name, earlier)).close()
    const result = await runCli(['build', at('other.txt'), '--out', url, '--name', name, '--replace', '--allow-shrink', '--capacity', '20000', '--error-rate', '0.01'])
    expect(result.stderr).toMatch(/^built /)
    expect(result.code).toBe(0)
    const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(filter.parameters).toEqual({ ...sizeRedisFilter(flags), seed: 77 })
    expect(await filter.hasMany(['other:1', 'other:2'])).toEqual([true, true])
    expect((await redis.keys(`${name}:*`)).sort()).toEqual(filter.keys.sort())
    await filter.destroy()
  })

  test('bad input for a new name leaves no key in Redis', async () => {
    const name = fresh()
    const result = await runCli(['build', at('fails-late.jsonl'), '--format', 'jsonl', '--out', url, '--name', name, ...sizing])
    expect(result.code).toBe(2)
    expect(await redis.keys(`${name}*`)).toEqual([])
  })

  test('a server that is not there: a clear message, exit 2', async () => {
    const server = await startRedisServer()
    await server.stop()
    const result = await runCli(['build', at('other.txt'), '--out', `redis://127.0.0.1:${server.port}`, '--name', 'x', ...sizing, '--timeout', '1000'])
    expect(result.stderr).toMatch(new RegExp(`cannot connect to redis://127\\.0\\.0\\.1:${server.port}: .*ECONNREFUSED.*\\[CLI_TARGET\\]`))
    expect(result.code).toBe(2)
  })

  test('Redis going down mid-build: a clear message and exit 2', async () => {
    const server = await startRedisServer()
    const watcher = new Redis({ host: server.host, port: server.port, ...options })
    const pending = runCli(['build', '-', '--out', `redis://127.0.0.1:${server.port}`, '--name', 'mid', ...sizing, '--timeout', '1000'], {
      onStart: (child) => {
        child.stdin!.write('a\nb\n')
        // Once the CLI is connected (CLIENT LIST shows its name), the server dies; then the input ends.
        const poll = setInterval(async () => {
          if (!String(await watcher.client('LIST').catch(() => '')).includes('name=bloomkit')) return
          clearInterval(poll)
          watcher.disconnect()
          await server.stop()
          child.stdin!.end('c\n')
        }, 50)
      },
    })
    const result = await pending
    expect(result.stderr).toMatch(/^bloomkit: .*(closed|ECONNREFUSED|ECONNRESET|EPIPE|unavailable|timed out).*\[(BLOOM_STORE_UNAVAILABLE|CLI_TARGET)\]$/im)
    expect(result.code).toBe(2)
  })

  test('check and inspect: a missing name is an error (exit 2), not "absent"', async () => {
    for (const command of ['check', 'inspect']) {
      const result = await runCli([command, url, '--name', 'no-such-filter', ...(command === 'check' ? ['x'] : [])])
      expect(result.stderr).toMatch(/no filter named "no-such-filter".*\[BLOOM_NOT_FOUND\]/)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
    }
  })
})

test('delete refuses a Redis name that is not a bloomkit filter, saying what it is, and deletes nothing', async () => {
  const name = fresh()
  await redis.set(`${name}-string`, 'keep')
  await redis.sadd(`${name}-set`, 'a', 'b')
  await redis.hset(`${name}-foreign:meta`, 'owner', 'another app')
  for (const [key, what] of [
    [`${name}-string`, /"cli-test-\d+-\d+-string" is a Redis string, not a bloomkit filter \(no filter of that name\); nothing deleted \[CLI_TARGET\]/],
    [`${name}-set`, /is a Redis set, not a bloomkit filter .*\[CLI_TARGET\]/],
    [`${name}-foreign`, /its meta hash has no "format" field: not a bloomkit filter \[BLOOM_CORRUPT_STORE\]/],
  ] as const) {
    const refused = await runCli(['delete', url, '--name', key, '--yes'])
    expect(refused.stderr).toMatch(what)
    expect(refused.code).toBe(2)
  }
  expect(await redis.get(`${name}-string`)).toBe('keep')
  expect((await redis.smembers(`${name}-set`)).sort()).toEqual(['a', 'b'])
  expect(await redis.hgetall(`${name}-foreign:meta`)).toEqual({ owner: 'another app' })
  const nothing = await runCli(['delete', url, '--name', `${name}-none`, '--yes'])
  expect(nothing.stderr).toMatch(/^nothing to delete at /)
  expect(nothing.code).toBe(0)
  await redis.del(`${name}-string`, `${name}-set`, `${name}-foreign:meta`)
})
