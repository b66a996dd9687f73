import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { estimateErrorRate } from '@bloomkit/core'
import { decodeSnapshot } from '@bloomkit/core/store'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { runCli, tempFolder } from './support/run-cli.js'

const folder = tempFolder()
const at = (name: string) => join(folder.path, name)
const standalone = inject('cliRedis')
const url = `redis://${standalone.host}:${standalone.port}`
const keys = Array.from({ length: 50_000 }, (_, i) => `k${i}`)
const sizing = ['--capacity', '100000', '--error-rate', '0.001']

beforeAll(() => {
  writeFileSync(at('keys.txt'), keys.join('\n'))
  writeFileSync(at('few.txt'), 'x\ny\n')
})
afterAll(() => folder.remove())

describe('LevelDB folders', () => {
  test('build, check and inspect a level:<folder> target', async () => {
    const target = `level:${at('db')}`
    expect((await runCli(['build', at('keys.txt'), '--out', target, ...sizing])).code).toBe(0)
    const check = await runCli(['check', target, 'k0', 'k49999', 'zz'])
    expect(check.stdout).toBe('k0\tpresent\nk49999\tpresent\nzz\tabsent\n')
    expect(check.code).toBe(1)
    const inspect = await runCli(['inspect', target])
    expect(inspect.code).toBe(0)
    expect(inspect.stdout).toMatch(/^layout +blocked$/m)
    expect(inspect.stdout).toMatch(/^estimated +(49,[5-9]\d\d|50,[0-4]\d\d) keys$/m)
    // The rate the set bits give now, and the sizing model's expected rate at the estimated keys.
    const report = JSON.parse((await runCli(['inspect', target, '--json'])).stdout)
    expect(report.expectedErrorRate).toBe(estimateErrorRate({ ...report.parameters, items: report.estimatedCount }))
    expect(report.expectedErrorRate / report.errorRate).toBeGreaterThan(0.8)
    expect(report.expectedErrorRate / report.errorRate).toBeLessThan(1.25)
    expect(inspect.stdout).toMatch(new RegExp(`^error rate [\\d.e-]+ now; ${report.expectedErrorRate.toPrecision(3)} expected at ${report.estimatedCount.toLocaleString('en-US')} keys$`, 'm'))
  })

  test('an existing folder is kept without --replace, and swapped whole with it', async () => {
    const target = `level:${at('swap')}`
    expect((await runCli(['build', at('keys.txt'), '--out', target, ...sizing])).code).toBe(0)
    const refused = await runCli(['build', at('few.txt'), '--out', target, ...sizing])
    expect(refused.stderr).toMatch(/already holds data; pass --replace/)
    expect(refused.code).toBe(2)
    writeFileSync(at('bad.csv'), 'a\n"b\n')
    const failed = await runCli(['build', at('bad.csv'), '--format', 'csv', '--out', target, '--replace', ...sizing])
    expect(failed.code).toBe(2)
    expect((await runCli(['check', target, 'k1'])).code).toBe(0)
    expect((await runCli(['build', at('few.txt'), '--out', target, '--replace', '--allow-shrink'])).code).toBe(0)
    expect((await runCli(['check', target, 'x', 'y', 'k1'])).stdout).toBe('x\tpresent\ny\tpresent\nk1\tabsent\n')
    expect(readdirSync(folder.path).filter((name) => name.includes('.new-') || name.includes('.old-'))).toEqual([])
  })
})

describe('bloomkit copy', () => {
  test('file → level → Redis → file keeps every bit, checked by the snapshot CRCs', async () => {
    expect((await runCli(['build', at('keys.txt'), '--out', at('a.blmk'), ...sizing])).code).toBe(0)
    expect((await runCli(['copy', at('a.blmk'), `level:${at('copy-db')}`])).code).toBe(0)
    const name = `cli-copy-${process.pid}`
    expect((await runCli(['copy', `level:${at('copy-db')}`, url, '--to-name', name])).code).toBe(0)
    const toFile = await runCli(['copy', url, '--name', name, at('b.blmk')])
    expect(toFile.code).toBe(0)
    expect(Buffer.from(decodeSnapshot(readFileSync(at('b.blmk'))).payload).equals(Buffer.from(decodeSnapshot(readFileSync(at('a.blmk'))).payload))).toBe(true)
    const redis = new Redis({ ...standalone, maxRetriesPerRequest: 1 })
    await (await RedisBloomFilter.open(redis, name)).destroy()
    redis.disconnect()
  })

  test('a corrupt snapshot is refused and no target is written', async () => {
    const bytes = readFileSync(at('a.blmk'))
    bytes[bytes.length - 100] ^= 0xff
    writeFileSync(at('corrupt.blmk'), bytes)
    for (const target of [at('out.blmk'), `level:${at('out-db')}`]) {
      const result = await runCli(['copy', at('corrupt.blmk'), target])
      expect(result.stderr).toMatch(/payload fails its CRC-32 check \[BLOOM_CORRUPT_SNAPSHOT\]/)
      expect(result.code).toBe(2)
    }
    expect(existsSync(at('out.blmk'))).toBe(false)
    expect(existsSync(at('out-db'))).toBe(false)
  })

  test('a missing source and an unreadable target name the argument', async () => {
    const missing = await runCli(['copy', at('nope.blmk'), at('x.blmk')])
    expect(missing.stderr).toMatch(/snapshot file ".*nope\.blmk" cannot be read: ENOENT/)
    expect(missing.code).toBe(2)
    const noFolder = await runCli(['inspect', `level:${at('no-folder')}`])
    expect(noFolder.stderr).toMatch(/folder ".*no-folder" does not exist/)
    expect(noFolder.code).toBe(2)
    const notSnapshot = await runCli(['inspect', at('keys.txt')])
    expect(notSnapshot.stderr).toMatch(/not a bloomkit snapshot \[BLOOM_CORRUPT_SNAPSHOT\]/)
    expect(notSnapshot.code).toBe(2)
  })
})
