import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { runCli, tempFolder } from './support/run-cli.js'

// The LevelDB and Redis backends load only for a target that needs them (src/backends.ts): each
// command runs as a real process under a loader hook that records every module it resolves.

const RECORDER = fileURLToPath(new URL('./support/record-modules.mjs', import.meta.url))
const LEVEL = ['@bloomkit/level-backend', 'classic-level']
const REDIS = ['@bloomkit/redis-backend', 'ioredis']

const folder = tempFolder('bloomkit-cli-lazy-')
const at = (name: string) => join(folder.path, name)
const sizing = ['--capacity', '1000', '--error-rate', '0.01']
const standalone = inject('cliRedis')
const redisUrl = `redis://${standalone.host}:${standalone.port}`

/** The packages a module URL belongs to: `ioredis` for …/node_modules/ioredis/…, `@bloomkit/core` for …/packages/core/dist/…. */
function packageOf(url: string): string | undefined {
  const installed = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (installed !== null) return installed[1]
  const workspace = /\/packages\/([^/]+)\/dist\//.exec(url)
  return workspace === null ? undefined : `@bloomkit/${workspace[1]}`
}

let runs = 0

/** Runs `bloomkit <args>` and returns its exit code and the packages it loaded. */
async function loadedBy(args: readonly string[]): Promise<{ code: number | null; stderr: string; packages: string[] }> {
  const record = at(`modules-${runs++}.txt`)
  writeFileSync(record, '')
  const result = await runCli(args, { nodeArgs: ['--import', RECORDER], env: { BLOOMKIT_RECORD_MODULES: record } })
  const packages = new Set(readFileSync(record, 'utf8').split('\n').map(packageOf).filter((name) => name !== undefined))
  return { code: result.code, stderr: result.stderr, packages: [...packages].sort() }
}

beforeAll(async () => {
  writeFileSync(at('keys.txt'), 'a\nb\nc\n')
  expect((await runCli(['build', at('keys.txt'), '--out', at('abc.blmk'), ...sizing])).code).toBe(0)
  expect((await runCli(['build', at('keys.txt'), '--out', at('counting.blmk'), '--counting', ...sizing])).code).toBe(0)
  expect((await runCli(['build', at('keys.txt'), '--out', `level:${at('abc-db')}`, ...sizing])).code).toBe(0)
})
afterAll(() => folder.remove())

describe('backends load only for targets that need them', () => {
  test('help and --version load neither the LevelDB nor the Redis backend', async () => {
    for (const args of [['--help'], ['--version'], ['build', '--help'], ['size', '--help'], ['delete', '--help']]) {
      const run = await loadedBy(args)
      expect(run.code, args.join(' ')).toBe(0)
      expect(run.packages, args.join(' ')).toContain('commander')
      for (const name of [...LEVEL, ...REDIS]) expect(run.packages, args.join(' ')).not.toContain(name)
    }
  })

  test('commands on snapshot files load neither the LevelDB nor the Redis backend', async () => {
    const commands = [
      ['build', at('keys.txt'), '--out', at('built.blmk'), ...sizing],
      ['inspect', at('abc.blmk')],
      ['check', at('abc.blmk'), 'a', 'b'],
      ['copy', at('abc.blmk'), at('copied.blmk')],
      ['remove', at('counting.blmk'), 'a'],
      ['delete', at('copied.blmk'), '--yes'],
    ]
    for (const args of commands) {
      const run = await loadedBy(args)
      expect(run.code, `${args[0]}: ${run.stderr}`).toBe(0)
      expect(run.packages, args[0]).toContain('@bloomkit/memory-backend')
      for (const name of [...LEVEL, ...REDIS]) expect(run.packages, args[0]).not.toContain(name)
    }
  })

  test('a LevelDB target loads the LevelDB backend and classic-level, not the Redis one', async () => {
    const run = await loadedBy(['inspect', `level:${at('abc-db')}`])
    expect(run.code, run.stderr).toBe(0)
    expect(run.packages).toEqual(expect.arrayContaining(LEVEL))
    for (const name of REDIS) expect(run.packages).not.toContain(name)
  })

  test('a Redis target loads the Redis backend and ioredis, not the LevelDB one', async () => {
    const name = `lazy-${randomUUID()}`
    const built = await loadedBy(['build', at('keys.txt'), '--out', redisUrl, '--name', name, ...sizing])
    expect(built.code, built.stderr).toBe(0)
    expect(built.packages).toEqual(expect.arrayContaining(REDIS))
    for (const other of LEVEL) expect(built.packages).not.toContain(other)
    expect((await runCli(['delete', redisUrl, '--name', name, '--yes'])).code).toBe(0)
  })

  test('size loads the Redis backend for its Redis columns, and not the LevelDB one', async () => {
    const run = await loadedBy(['size', ...sizing])
    expect(run.code, run.stderr).toBe(0)
    expect(run.packages).toContain('@bloomkit/redis-backend')
    for (const name of LEVEL) expect(run.packages).not.toContain(name)
  })
})

describe('the CSV parser and the progress bar load only when used', () => {
  const OPTIONAL = ['csv-parse', 'cli-progress']

  test('help, inspect, check and a build of lines into a file load neither', async () => {
    for (const args of [['--help'], ['inspect', at('abc.blmk')], ['check', at('abc.blmk'), 'a'], ['build', at('keys.txt'), '--out', at('lines.blmk'), ...sizing]]) {
      const run = await loadedBy(args)
      expect(run.code, `${args[0]}: ${run.stderr}`).toBe(0)
      for (const name of OPTIONAL) expect(run.packages, args[0]).not.toContain(name)
    }
  })

  test('CSV input loads csv-parse and still reads every key; --progress loads cli-progress and draws the bar', async () => {
    writeFileSync(at('keys.csv'), 'id,name\na,x\nb,y\nc,z\n')
    const csv = await loadedBy(['build', at('keys.csv'), '--format', 'csv', '--header', '--column', 'id', '--out', at('csv.blmk'), ...sizing, '--json'])
    expect(csv.code, csv.stderr).toBe(0)
    expect(csv.packages).toContain('csv-parse')
    expect(csv.packages).not.toContain('cli-progress')
    const checked = await runCli(['check', at('csv.blmk'), 'a', 'b', 'c', '--json'])
    expect(checked.code, checked.stderr).toBe(0)
    expect(checked.stdout.trim().split('\n').map((line) => JSON.parse(line).present)).toEqual([true, true, true])
    const drawn = await loadedBy(['build', at('keys.txt'), '--out', at('progress.blmk'), '--progress', ...sizing])
    expect(drawn.code, drawn.stderr).toBe(0)
    expect(drawn.packages).toContain('cli-progress')
    expect(drawn.stderr).toMatch(/keys\/s/)
  })
})
