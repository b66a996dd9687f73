import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeSnapshot } from '@bloomkit/core/store'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { RedisBloomFilter, RedisCountingFilter } from '@bloomkit/redis-backend'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { runCli, tempFolder } from './support/run-cli.js'

const folder = tempFolder()
const at = (name: string) => join(folder.path, name)
const standalone = inject('cliRedis')
const clusterNodes = inject('cliCluster')
const redisUrl = `redis://${standalone.host}:${standalone.port}`
const clusterUrl = `redis+cluster://${clusterNodes.map((node) => `${node.host}:${node.port}`).join(',')}`
const redisOptions = { maxRetriesPerRequest: 1, connectTimeout: 2000 }
let redis: Redis
let cluster: Cluster
let run = 0
const fresh = () => `cli-counting-${process.pid}-${++run}`

/** 20 000 keys, the first 2 000 listed twice (so their counters hold 2), then the removals: every third key once. */
const keys = Array.from({ length: 20_000 }, (_, i) => `user:${i}`)
const added = [...keys, ...keys.slice(0, 2_000)]
const removed = keys.filter((_, i) => i % 3 === 0)
const sizing = ['--capacity', '20000', '--error-rate', '0.01']

beforeAll(() => {
  writeFileSync(at('added.txt'), `${added.join('\n')}\n`)
  writeFileSync(at('removed.txt'), `${removed.join('\n')}\n`)
  redis = new Redis({ ...standalone, ...redisOptions })
  cluster = new Cluster(clusterNodes, { redisOptions })
})
afterAll(() => {
  redis.disconnect()
  cluster.disconnect()
  folder.remove()
})

/** The library's counting filter with a snapshot's parameters after adding `added` and removing `gone`. */
function libraryFilter(snapshot: Uint8Array, gone: readonly string[] = []): CountingMemoryFilter {
  const filter = CountingMemoryFilter.fromParametersSync(decodeSnapshot(snapshot, 'counting').parameters)
  filter.addMany(added)
  filter.removeMany(gone)
  return filter
}

/** Keys still in after the removals: every added key not in `removed`, and those added twice. */
function kept(): string[] {
  const once = new Set(removed)
  return keys.filter((key, i) => !once.has(key) || i < 2_000)
}

describe('bloomkit build --counting and remove on a snapshot file', () => {
  test('build --counting writes the counting snapshot (version 3) the library makes from the same keys, byte for byte, in one pass or several', async () => {
    const one = await runCli(['build', at('added.txt'), '--out', at('one.blmk'), '--counting', ...sizing, '--json'])
    expect(one.code).toBe(0)
    expect(JSON.parse(one.stdout)).toMatchObject({ keys: added.length, counting: true, counterBits: 4 })
    const bytes = readFileSync(at('one.blmk'))
    expect(bytes.readUInt16LE(4)).toBe(3)
    expect(Buffer.from(libraryFilter(bytes).export()).equals(bytes)).toBe(true)
    const seed = String(decodeSnapshot(bytes, 'counting').parameters.seed)
    const passes = await runCli(['build', at('added.txt'), '--out', at('passes.blmk'), '--counting', ...sizing, '--shards', '4', '--seed', seed, '--memory', '1M', '--json'])
    expect(passes.code).toBe(0)
    const several = readFileSync(at('passes.blmk'))
    expect(Buffer.from(libraryFilter(several).export()).equals(several)).toBe(true)
  })

  test('remove takes keys from standard input, --keys-file or arguments; keys added twice stay, none of the kept keys reads absent', async () => {
    await runCli(['build', at('added.txt'), '--out', at('rm.blmk'), '--counting', ...sizing])
    const before = readFileSync(at('rm.blmk'))
    const fromStdin = await runCli(['remove', at('rm.blmk'), '--json'], { input: `${removed.join('\n')}\n` })
    expect(fromStdin.code).toBe(0)
    const summary = JSON.parse(fromStdin.stdout)
    expect(summary).toMatchObject({ keys: removed.length, removed: removed.length, absent: 0 })
    const after = readFileSync(at('rm.blmk'))
    // Exactly the library's counters after the same removals.
    expect(Buffer.from(libraryFilter(before, removed).export()).equals(after)).toBe(true)
    const check = await runCli(['check', at('rm.blmk'), '--keys-file', '-'], { input: `${kept().join('\n')}\n` })
    expect(check.code).toBe(0)
    expect(check.stdout).not.toMatch(/absent/)
    // A key added once and removed reads absent unless it is a false positive: most of them do.
    const gone = await runCli(['check', at('rm.blmk'), '--json', '-'], { input: `${removed.slice(1_000).join('\n')}\n` })
    const absent = gone.stdout.trim().split('\n').filter((line) => JSON.parse(line).present === false).length
    expect(absent).toBeGreaterThan((removed.length - 1_000) * 0.9)
    // --keys-file and arguments: the second removal of a twice-added key takes it out; a key that reads absent changes nothing.
    writeFileSync(at('second.txt'), 'user:0\n')
    const file = await runCli(['remove', at('rm.blmk'), '--keys-file', at('second.txt')])
    expect(file.stderr).toMatch(/removed 1 of 1 key\(s\)/)
    const unchanged = readFileSync(at('rm.blmk'))
    const args = await runCli(['remove', at('rm.blmk'), 'never-added-key-that-reads-absent'])
    expect(args.code).toBe(0)
    expect(args.stderr).toMatch(/removed 0 of 1 key\(s\) .*1 read absent \(nothing changed for them\)/)
    expect(readFileSync(at('rm.blmk')).equals(unchanged)).toBe(true)
  })

  test('remove refuses a plain filter (BLOOM_INCOMPATIBLE) and a key over --max-key-length (CLI_INPUT), leaving the file as it was', async () => {
    const plain = await MemoryBloomFilter.create({ capacity: 100, errorRate: 0.01 })
    plain.add('a')
    writeFileSync(at('plain.blmk'), plain.export())
    const refused = await runCli(['remove', at('plain.blmk'), 'a'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/holds a plain Bloom filter, which cannot remove keys.*\[BLOOM_INCOMPATIBLE\]/)
    expect(readFileSync(at('plain.blmk')).equals(Buffer.from(plain.export()))).toBe(true)
    await runCli(['build', at('added.txt'), '--out', at('long.blmk'), '--counting', ...sizing])
    const before = readFileSync(at('long.blmk'))
    const long = await runCli(['remove', at('long.blmk'), '--max-key-length', '10'], { input: `user:1\n${'x'.repeat(11)}\n` })
    expect(long.code).toBe(2)
    expect(long.stderr).toMatch(/\[CLI_INPUT\]/)
    expect(readFileSync(at('long.blmk')).equals(before)).toBe(true)
    expect(readdirSync(folder.path).filter((name) => name.startsWith('.long.blmk.'))).toEqual([])
  })

  test('inspect reports the counter width and the saturated counters, as describeCounters does', async () => {
    const filter = CountingMemoryFilter.fromParametersSync({ bits: 8192, hashes: 5, shards: 1, seed: 7 })
    for (let i = 0; i < 20; i++) filter.add('hot')
    filter.addMany(['a', 'b', 'c'])
    writeFileSync(at('hot.blmk'), filter.export())
    const report = await runCli(['inspect', at('hot.blmk'), '--json'])
    expect(report.code).toBe(0)
    const described = filter.describeCounters()
    expect(described.saturated).toBeGreaterThan(0)
    expect(JSON.parse(report.stdout)).toMatchObject({ filter: 'counting', counterBits: 4, saturatedCounters: described.saturated, bytes: 4096, setBits: { total: described.nonZero } })
    const text = await runCli(['inspect', at('hot.blmk')])
    expect(text.stdout).toMatch(new RegExp(`saturated {2}${described.saturated} counter\\(s\\) at 15`))
    expect(text.stdout).toMatch(/filter {5}counting: 4-bit counters/)
  })
})

describe('counting filters in LevelDB and Redis through the CLI', () => {
  test('copy moves a counting filter file → LevelDB → Redis → Cluster → file byte for byte; --plain gives exportPlain', async () => {
    await runCli(['build', at('added.txt'), '--out', at('source.blmk'), '--counting', ...sizing])
    const source = readFileSync(at('source.blmk'))
    const name = fresh()
    for (const [from, to, extra] of [
      [at('source.blmk'), `level:${at('copy-level')}`, []],
      [`level:${at('copy-level')}`, redisUrl, ['--to-name', name]],
      [redisUrl, clusterUrl, ['--name', name]],
      [clusterUrl, at('back.blmk'), ['--name', name]],
    ] as const) {
      const copied = await runCli(['copy', from, to, ...extra])
      expect(copied.stderr).toMatch(/copied/)
      expect(copied.code).toBe(0)
    }
    expect(readFileSync(at('back.blmk')).equals(source)).toBe(true)
    const onRedis = await RedisCountingFilter.open(redis, name)
    expect(Buffer.from(await onRedis.export()).equals(source)).toBe(true)
    await onRedis.close()
    const plain = await runCli(['copy', redisUrl, at('plain-copy.blmk'), '--name', name, '--plain'])
    expect(plain.code).toBe(0)
    expect(readFileSync(at('plain-copy.blmk')).equals(Buffer.from(libraryFilter(source).exportPlain()))).toBe(true)
    const notCounting = await runCli(['copy', at('plain-copy.blmk'), at('x.blmk'), '--plain'])
    expect(notCounting.stderr).toMatch(/is already plain \[CLI_USAGE\]/)
    // A plain filter cannot take a counting filter's place in Redis (nor the other way): the meta's kind is not swapped.
    const mixed = await runCli(['copy', at('plain-copy.blmk'), redisUrl, '--to-name', name, '--replace'])
    expect(mixed.code).toBe(2)
    expect(mixed.stderr).toMatch(/is a counting filter and cannot be replaced by a plain filter.*\[CLI_TARGET\]/)
    await (await RedisCountingFilter.open(cluster, name)).destroy()
    await (await RedisCountingFilter.open(redis, name)).destroy()
  })

  test.each([
    ['LevelDB', () => `level:${at(`level-${++run}`)}`, [] as string[]],
    ['Redis', () => redisUrl, ['--name']],
    ['a Redis Cluster', () => clusterUrl, ['--name']],
  ])('%s: build --counting, remove from standard input, check, inspect, and --replace keeps the kind', async (_label, targetOf, nameFlag) => {
    const target = targetOf()
    const name = fresh()
    const named = nameFlag.length === 0 ? [] : [...nameFlag, name]
    const built = await runCli(['build', at('added.txt'), '--out', target, ...named, '--counting', ...sizing])
    expect(built.code).toBe(0)
    const removal = await runCli(['remove', target, ...named, '-', '--json'], { input: `${removed.join('\n')}\n` })
    expect(removal.code).toBe(0)
    expect(JSON.parse(removal.stdout)).toMatchObject({ keys: removed.length, removed: removed.length, absent: 0 })
    const check = await runCli(['check', target, ...named, '--keys-file', '-'], { input: `${kept().join('\n')}\n` })
    expect(check.code).toBe(0)
    const report = JSON.parse((await runCli(['inspect', target, ...named, '--json'])).stdout)
    expect(report).toMatchObject({ filter: 'counting', counterBits: 4, saturatedCounters: 0 })
    // The counters are the library's after the same adds and removals.
    const exported = await runCli(['copy', target, ...named, at(`export-${name}.blmk`)])
    expect(exported.code).toBe(0)
    const bytes = readFileSync(at(`export-${name}.blmk`))
    expect(Buffer.from(libraryFilter(bytes, removed).export()).equals(bytes)).toBe(true)
    const plainReplace = await runCli(['build', at('added.txt'), '--out', target, ...named, '--replace'])
    expect(plainReplace.stderr).toMatch(/holds a counting filter; build --replace keeps a filter's kind: add --counting.*\[CLI_USAGE\]/)
    const replaced = await runCli(['build', at('removed.txt'), '--out', target, ...named, '--replace', '--counting', '--allow-shrink'])
    expect(replaced.stderr).toMatch(/built counting filter/)
    expect(replaced.code).toBe(0)
    const again = await runCli(['check', target, ...named, removed[5]!, keys[1]!])
    expect(again.stdout).toMatch(new RegExp(`${removed[5]}\tpresent`))
    if (nameFlag.length > 0) await runCli(['delete', target, ...named, '--yes'])
  })

  test('build --counting into Redis makes the shards RedisCountingFilter.create makes (each string ≤ 4 MiB), and size --counting says so', async () => {
    // 4M keys at 1 %: the library's 5 shards of 3.97 MB, not the plain filter's 2 (then 9.9 MB of counters each).
    const big = ['--capacity', '4000000', '--error-rate', '0.01']
    const name = fresh()
    const built = await runCli(['build', at('removed.txt'), '--out', redisUrl, '--name', name, '--counting', ...big, '--seed', '7', '--json'])
    expect(built.code).toBe(0)
    const library = await RedisCountingFilter.create(redis, fresh(), { capacity: 4_000_000, errorRate: 0.01, seed: 7 })
    expect(library.parameters.shards).toBe(5)
    const onRedis = await RedisCountingFilter.open(redis, name)
    expect(onRedis.parameters).toEqual(library.parameters)
    for (const key of onRedis.keys.slice(1)) expect(Number(await redis.strlen(key))).toBeLessThanOrEqual(4 << 20)
    expect(await onRedis.hasMany(removed)).not.toContain(false)
    const sized = JSON.parse((await runCli(['size', ...big, '--counting', '--json'])).stdout)
    expect(sized).toMatchObject({ counting: true, counterBits: 4 })
    const blocked = sized.layouts.find((row: { layout: string }) => row.layout === 'blocked')
    // Sizing chooses no seed, so size --json gives none (issue 37 item 2).
    const { seed: _seed, ...sizedParameters } = library.parameters
    expect(blocked.redis.parameters).toEqual(sizedParameters)
    expect(blocked.bytes).toBe(blocked.parameters.bits / 2)
    const text = (await runCli(['size', ...big, '--counting'])).stdout
    expect(text).toMatch(/counting filter: 4-bit counters/)
    expect(text).toMatch(/blocked \(default\) .* 5 × 3\.8 MiB +6\n/)
    await Promise.all([onRedis.destroy(), library.destroy()])
  })

  test('remove on Redis stops at SIGINT: exit 130, says how many keys it removed, and the keys after the signal stay', async () => {
    const name = fresh()
    await runCli(['build', at('added.txt'), '--out', redisUrl, '--name', name, '--counting', ...sizing])
    const watcher = await RedisCountingFilter.open(redis, name)
    const first = keys.slice(10_000, 10_100)
    const later = keys.slice(10_100, 10_200)
    const result = await runCli(['remove', redisUrl, '--name', name, '-'], {
      onStart: (child) => {
        child.stdin!.write(`${first.join('\n')}\n`)
        // Once the first keys are gone (watched from outside; a few may still read present as
        // false positives, hence "most"), the signal, then more input.
        let signalled = false
        const poll = setInterval(() => {
          void watcher.hasMany(first).then((present) => {
            if (present.filter(Boolean).length > first.length / 2 || signalled) return
            signalled = true
            clearInterval(poll)
            child.kill('SIGINT')
            setTimeout(() => child.stdin!.end(`${later.join('\n')}\n`), 300)
          })
        }, 50)
      },
    })
    expect(result.code).toBe(130)
    const count = Number(/interrupted by SIGINT after (\d+) key\(s\) were removed/.exec(result.stderr)?.[1])
    expect(count).toBe(first.length)
    expect((await watcher.hasMany(later)).every(Boolean)).toBe(true)
    await watcher.destroy()
  })
})

test('a plain Redis filter is not opened as a counting one (RedisBloomFilter stays as it was)', async () => {
  const name = fresh()
  const plain = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01 })
  await plain.add('k')
  const refused = await runCli(['remove', redisUrl, '--name', name, 'k'])
  expect(refused.stderr).toMatch(/\[BLOOM_INCOMPATIBLE\]/)
  expect(await plain.has('k')).toBe(true)
  await plain.destroy()
})

test('a layered filter in LevelDB or Redis is refused by name (CLI_TARGET), and stays as it was', async () => {
  const name = fresh()
  const growing = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, growth: 2 })
  await growing.add('k')
  const refused = await runCli(['inspect', redisUrl, '--name', name])
  expect(refused.code).toBe(2)
  expect(refused.stderr).toMatch(new RegExp(`Redis filter "${name}" holds a layered \\(scalable or expiring\\) filter.*\\[CLI_TARGET\\]`))
  expect(await growing.has('k')).toBe(true)
  await growing.destroy()
  const location = at('layered-level')
  const inLevel = await LevelBloomFilter.create(location, { capacity: 1000, errorRate: 0.01, growth: 2 })
  await inLevel.add('k')
  await inLevel.close()
  const level = await runCli(['inspect', `level:${location}`])
  expect(level.code).toBe(2)
  expect(level.stderr).toMatch(/holds a layered \(scalable or expiring\) filter.*\[CLI_TARGET\]/)
  const again = await LevelBloomFilter.open(location)
  expect(again.kind).toBe('layered')
  expect(await again.has('k')).toBe(true)
  await again.close()
})
