import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { decodeSnapshot } from '@bloomkit/core/store'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { BIN, runCli, tempFolder } from './support/run-cli.js'

const folder = tempFolder()
const at = (name: string) => join(folder.path, name)
const standalone = inject('cliRedis')
const redisUrl = `redis://${standalone.host}:${standalone.port}`
const PRODUCER = fileURLToPath(new URL('./support/slow-producer.mjs', import.meta.url))
/** Keys in the filter that each pipeline tries to replace. */
const OLD_KEYS = 60_000
/**
 * Keys the producer writes before it stalls: fewer than half of OLD_KEYS, and more bytes than a
 * pipe buffers (64 KiB), so that its "ready" means bloomkit is up and reading.
 */
const PRODUCED = 20_000

beforeAll(() => {
  writeFileSync(at('old.txt'), Array.from({ length: OLD_KEYS }, (_, i) => `old:${i}`).join('\n'))
})
afterAll(() => folder.remove())

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`

interface PipelineRun {
  /** bloomkit's exit code, as `$?` saw it. */
  readonly code: number
  /** Everything written on standard error: the producer's "ready" line and bloomkit's message. */
  readonly stderr: string
}

/**
 * Runs `producer | bloomkit build - <args>` under bash in a process group of its own, as a terminal
 * runs a pipeline, and once the producer has written its keys and stalls, does `act` (send signals).
 * bloomkit's exit code is caught by a subshell that outlives a SIGINT (`trap :`, which bloomkit,
 * started by exec, does not inherit).
 */
function pipeline(args: readonly string[], act: (group: number, producer: number) => void, producerLine = `node ${quote(PRODUCER)} ${PRODUCED}`): Promise<PipelineRun> {
  const codeFile = at(`code-${Math.random().toString(36).slice(2)}`)
  const script = `${producerLine} | ( trap : INT; node ${quote(BIN)} build - ${args.map(quote).join(' ')}; echo $? > ${quote(codeFile)} )`
  return new Promise((resolve, reject) => {
    const shell = spawn('bash', ['-c', script], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    let acted = false
    shell.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
      const ready = /ready (\d+)/.exec(stderr)
      if (ready !== null && !acted) {
        acted = true
        // bloomkit has read most of the keys (see PRODUCED): the signal lands mid-build.
        setTimeout(() => act(shell.pid!, Number(ready[1])), 200)
      }
    })
    shell.on('error', reject)
    shell.on('close', () => {
      try {
        resolve({ code: Number(readFileSync(codeFile, 'utf8')), stderr })
      } catch (error) {
        reject(error)
      }
    })
  })
}

/** The bits a target holds now, read through `bloomkit copy` into a snapshot file. */
async function bitsOf(target: readonly string[]): Promise<Buffer> {
  const file = at(`bits-${Math.random().toString(36).slice(2)}.blmk`)
  const [where, ...flags] = target
  const copied = await runCli(['copy', where, file, ...flags])
  expect(copied.stderr).toMatch(/^copied/)
  return Buffer.from(decodeSnapshot(readFileSync(file)).payload)
}

const ctrlC = (group: number) => process.kill(-group, 'SIGINT')
const killProducer = (_group: number, producer: number) => process.kill(producer, 'SIGKILL')

describe.each([
  { kind: 'file', target: () => [at('ids.blmk')] },
  { kind: 'LevelDB', target: () => [`level:${at('ids-db')}`] },
  { kind: 'Redis', target: () => [redisUrl, '--name', `whole-input-${process.pid}`] },
])('producer | bloomkit build - --replace into a $kind target', ({ target }) => {
  let before: Buffer
  beforeAll(async () => {
    const [where, ...flags] = target()
    const built = await runCli(['build', at('old.txt'), '--out', where, ...flags, '--capacity', '100000', '--error-rate', '0.01'])
    expect(built.stderr).toMatch(/built .* 60,000 keys/)
    before = await bitsOf(target())
  })
  const replace = () => {
    const [where, ...flags] = target()
    return ['--out', where, ...flags, '--replace']
  }

  test('Ctrl-C (SIGINT to the producer and bloomkit at once) commits nothing and exits 130, twice in a row', async () => {
    for (let i = 0; i < 2; i++) {
      const run = await pipeline(replace(), ctrlC)
      expect(run.stderr).toMatch(/bloomkit: interrupted by SIGINT; the target is left as it was/)
      expect(run.code).toBe(130)
      expect((await bitsOf(target())).equals(before)).toBe(true)
    }
  })

  test('a producer killed alone: the build from a third of the keys is refused (CLI_INCOMPLETE, exit 2), the old filter answers as before', async () => {
    const run = await pipeline(replace(), killProducer)
    expect(run.stderr).toMatch(/bloomkit: the input held 20,000 keys, under half of the about (59|60),\d{3} in the filter it would replace.* \[CLI_INCOMPLETE\]/)
    expect(run.code).toBe(2)
    expect((await bitsOf(target())).equals(before)).toBe(true)
    const check = await runCli(['check', ...target(), 'old:0', `old:${OLD_KEYS - 1}`])
    expect(check.stdout).toBe(`old:0\tpresent\nold:${OLD_KEYS - 1}\tpresent\n`)
  })

  test('--end-marker written after a producer that succeeded (the README pattern): a killed or failed producer writes none, so nothing is committed even with --allow-shrink', async () => {
    const withMarker = [...replace(), '--allow-shrink', '--end-marker', '#END']
    const killed = await pipeline(withMarker, killProducer, `{ node ${quote(PRODUCER)} ${PRODUCED} && echo '#END'; }`)
    expect(killed.stderr).toMatch(/without the --end-marker line.*\[CLI_INCOMPLETE\]/)
    expect(killed.code).toBe(2)
    const failed = await pipeline(withMarker, () => {}, `{ node ${quote(PRODUCER)} ${PRODUCED} exit && echo '#END'; }`)
    expect(failed.stderr).toMatch(/without the --end-marker line.*\[CLI_INCOMPLETE\]/)
    expect(failed.code).toBe(2)
    expect((await bitsOf(target())).equals(before)).toBe(true)
  })
})

describe('build --expect, --min-keys, --end-marker, --allow-shrink', () => {
  const sizing = ['--capacity', '100000', '--error-rate', '0.01']

  test('--expect N commits exactly N keys and refuses any other count; --min-keys N refuses fewer', async () => {
    const out = at('expect.blmk')
    const short = await runCli(['build', at('old.txt'), '--out', out, ...sizing, '--expect', String(OLD_KEYS + 1)])
    expect(short.stderr).toBe('bloomkit: the input held 60,000 keys, --expect 60,001; nothing was committed [CLI_INCOMPLETE]\n')
    expect(short.code).toBe(2)
    expect(existsSync(out)).toBe(false)
    const fewer = await runCli(['build', at('old.txt'), '--out', out, ...sizing, '--min-keys', '60001'])
    expect(fewer.stderr).toMatch(/fewer than --min-keys 60,001.*\[CLI_INCOMPLETE\]/)
    expect(fewer.code).toBe(2)
    expect(readdirSync(folder.path).filter((name) => name.includes('expect'))).toEqual([])
    const exact = await runCli(['build', at('old.txt'), '--out', out, ...sizing, '--expect', String(OLD_KEYS), '--min-keys', String(OLD_KEYS)])
    expect(exact.code).toBe(0)
    expect(existsSync(out)).toBe(true)
  })

  test('--end-marker: the marker line is not a key, a line after it is an error, and a missing one commits nothing', async () => {
    const out = at('marker.blmk')
    const ok = await runCli(['build', '-', '--out', out, ...sizing, '--end-marker', 'END', '--json'], { input: 'a\nb\n\nEND\n' })
    expect(ok.code).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ keys: 2, skipped: 1 })
    expect((await runCli(['check', out, 'a', 'END'])).stdout).toBe('a\tpresent\nEND\tabsent\n')
    const after = await runCli(['build', '-', '--out', at('marker2.blmk'), ...sizing, '--end-marker', 'END'], { input: 'a\nEND\nb\n' })
    expect(after.stderr).toBe('bloomkit: line 3 follows the --end-marker line; the marker must be the last line [CLI_INPUT]\n')
    expect(after.code).toBe(2)
    const missing = await runCli(['build', '-', '--out', at('marker2.blmk'), ...sizing, '--end-marker', 'END'], { input: 'a\nb\n' })
    expect(missing.stderr).toMatch(/ended after 2 keys without the --end-marker line.*\[CLI_INCOMPLETE\]/)
    expect(existsSync(at('marker2.blmk'))).toBe(false)
    const csv = await runCli(['build', '-', '--format', 'csv', '--out', at('marker3.blmk'), ...sizing, '--end-marker', 'END', '--json'], { input: 'x,1\ny,2\nEND\n' })
    expect(JSON.parse(csv.stdout)).toMatchObject({ keys: 2 })
  })

  test('--replace by under half the estimated keys is refused; --allow-shrink lets it through', async () => {
    const out = at('shrink.blmk')
    expect((await runCli(['build', at('old.txt'), '--out', out, ...sizing])).code).toBe(0)
    const half = Array.from({ length: OLD_KEYS / 2 + 500 }, (_, i) => `new:${i}`).join('\n')
    // Just over half is not a shrink worth refusing.
    expect((await runCli(['build', '-', '--out', out, '--replace'], { input: half })).code).toBe(0)
    const few = await runCli(['build', '-', '--out', out, '--replace'], { input: 'new:1\nnew:2\n' })
    expect(few.stderr).toMatch(/the input held 2 keys, under half of the about (29|30),\d{3} .*--allow-shrink.*\[CLI_INCOMPLETE\]/)
    expect(few.code).toBe(2)
    expect((await runCli(['build', '-', '--out', out, '--replace', '--allow-shrink'], { input: 'new:1\nnew:2\n' })).code).toBe(0)
    expect((await runCli(['check', out, 'new:1', 'new:3'])).stdout).toBe('new:1\tpresent\nnew:3\tabsent\n')
  })
})

describe.each([
  { kind: 'file', target: (id: string) => [at(`empty-file-${id}.blmk`)] },
  { kind: 'LevelDB', target: (id: string) => [`level:${at(`empty-level-${id}`)}`] },
  { kind: 'Redis', target: (id: string) => [redisUrl, '--name', `empty-${process.pid}-${id}`] },
])('an input that held no key, into a $kind target', ({ kind, target }) => {
  const sizing = ['--capacity', '1000', '--error-rate', '0.01']
  const refusal = /^bloomkit: the input held no keys(?: \(2 blank lines or empty values skipped\))?; if the producer failed, nothing was committed; pass --allow-empty if the filter is meant to be empty \[CLI_INCOMPLETE\]\n$/
  /** Whether anything of the target exists: the file or folder (or a temporary one beside it), or a key of the Redis name. */
  async function leftOf(id: string): Promise<string[]> {
    if (kind !== 'Redis') return readdirSync(folder.path).filter((name) => name.includes(`empty-${kind === 'file' ? 'file' : 'level'}-${id}`))
    const client = new Redis({ ...standalone, maxRetriesPerRequest: 1 })
    try {
      return await client.keys(`empty-${process.pid}-${id}*`)
    } finally {
      client.disconnect()
    }
  }

  test('`false | bloomkit build -`, an empty file or blank lines commit nothing new (CLI_INCOMPLETE, exit 2); --allow-empty builds the empty filter', async () => {
    writeFileSync(at('no-keys.txt'), '')
    for (const [input, from] of [['', '-'], ['\n\r\n', '-'], ['', at('no-keys.txt')]] as const) {
      const [where, ...flags] = target('new')
      const refused = await runCli(['build', from, '--out', where, ...flags, ...sizing], { input })
      expect(refused.stderr).toMatch(refusal)
      expect(refused.code).toBe(2)
      expect(await leftOf('new')).toEqual([])
    }
    const counting = await runCli(['build', '-', '--out', ...target('new'), ...sizing, '--counting'])
    expect(counting.stderr).toMatch(refusal)
    expect(await leftOf('new')).toEqual([])
    const [where, ...flags] = target('new')
    const allowed = await runCli(['build', '-', '--out', where, ...flags, ...sizing, '--allow-empty', '--json'])
    expect(allowed.code).toBe(0)
    expect(JSON.parse(allowed.stdout)).toMatchObject({ keys: 0 })
    const check = await runCli(['check', where, ...flags, 'user:1'])
    expect(check.stdout).toBe('user:1\tabsent\n')
    expect(check.code).toBe(1)
  }, 180_000)

  test('--replace of a small filter (too small for the shrink guard) by an empty input keeps the old one, with or without new sizing', async () => {
    const [where, ...flags] = target('old')
    expect((await runCli(['build', '-', '--out', where, ...flags, ...sizing], { input: 'old:1\nold:2\nold:3\n' })).code).toBe(0)
    const before = await bitsOf(target('old'))
    for (const resize of [[], ['--capacity', '5000', '--error-rate', '0.01']]) {
      const refused = await runCli(['build', '-', '--out', where, ...flags, '--replace', ...resize])
      expect(refused.stderr).toMatch(refusal)
      expect(refused.code).toBe(2)
      expect((await bitsOf(target('old'))).equals(before)).toBe(true)
    }
    expect((await runCli(['check', where, ...flags, 'old:1', 'old:3'])).stdout).toBe('old:1\tpresent\nold:3\tpresent\n')
    expect((await runCli(['build', '-', '--out', where, ...flags, '--replace', '--allow-empty'])).code).toBe(0)
    expect((await runCli(['check', where, ...flags, 'old:1'])).stdout).toBe('old:1\tabsent\n')
  }, 180_000)
})

describe('build --max-key-length', () => {
  const sizing = ['--capacity', '1000', '--error-rate', '0.01']

  test('a line longer than --max-key-length fails with CLI_INPUT naming its line, a line of exactly that length is a key (CRLF too)', async () => {
    const long = 'x'.repeat(100)
    const refused = await runCli(['build', '-', '--out', at('long.blmk'), ...sizing, '--max-key-length', '99'], { input: `a\n${long}\nb\n` })
    expect(refused.stderr).toBe('bloomkit: line 2 is longer than --max-key-length (99 bytes); raise it if such keys are meant [CLI_INPUT]\n')
    expect(refused.code).toBe(2)
    expect(existsSync(at('long.blmk'))).toBe(false)
    const taken = await runCli(['build', '-', '--out', at('long.blmk'), ...sizing, '--max-key-length', '100', '--json'], { input: `a\r\n${long}\r\nb` })
    expect(JSON.parse(taken.stdout)).toMatchObject({ keys: 3 })
    expect((await runCli(['check', at('long.blmk'), long])).stdout).toBe(`${long}\tpresent\n`)
  })

  test('a line without end (64 MiB of one key on standard input) stops at the default limit of 1 MiB, before the rest is read', async () => {
    const huge = Buffer.alloc(64 << 20, 0x61)
    const result = await runCli(['build', '-', '--out', at('huge.blmk'), ...sizing], { input: huge })
    expect(result.stderr).toBe('bloomkit: line 1 is longer than --max-key-length (1048576 bytes); raise it if such keys are meant [CLI_INPUT]\n')
    expect(result.code).toBe(2)
  })
})

describe("the CLI README's nightly rebuild, as written", () => {
  // The script exactly as the README shows it, with `psql` and `bloomkit` defined as shell
  // functions in front (an export of `count` keys that exits with `code`, and this build's binary)
  // and the documented Redis address and name pointed at the test server.
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const script = /#### The nightly rebuild\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  const name = `nightly-${process.pid}`

  async function nightly(count: number, code: number): Promise<{ code: number | null; stderr: string }> {
    const file = at(`nightly-${count}-${code}.sh`)
    const body = script.replace('#!/usr/bin/env bash\n', '').replace('redis://cache:6379', redisUrl).replace('--name user-ids', `--name ${name}`)
    const producer = `let o='';for(let i=0;i<${count};i++)o+='new:'+i+'\\n';process.stdout.write(o,()=>process.exit(${code}))`
    writeFileSync(file, `psql() { node -e ${quote(producer)}; }\nbloomkit() { node ${quote(BIN)} "$@"; }\n${body}`)
    return new Promise((resolve, reject) => {
      const shell = spawn('bash', [file], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, DATABASE_URL: 'postgres://db/app' } })
      let stderr = ''
      shell.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
      shell.on('error', reject)
      shell.on('close', (exit) => resolve({ code: exit, stderr }))
    })
  }

  test('the README shows set -o pipefail and the end marker written only after the export succeeded', () => {
    expect(script).toMatch(/set -euo pipefail/)
    expect(script).toMatch(/\{ psql [^}]*&& echo '#END'; \} \|/)
    expect(script).toMatch(/bloomkit build - --out redis:\/\/cache:6379 --name user-ids --replace --end-marker '#END'/)
  })

  test('an export that dies part way fails the script (exit not 0) and the filter answers as before; one that succeeds replaces it', async () => {
    const target = [redisUrl, '--name', name]
    expect((await runCli(['build', at('old.txt'), '--out', ...target, '--capacity', '100000', '--error-rate', '0.01'])).code).toBe(0)
    const before = await bitsOf(target)
    // The database connection lost after 50,000 of the rows: more than half, so only the marker catches it.
    const died = await nightly(50_000, 1)
    expect(died.code).not.toBe(0)
    expect(died.stderr).toMatch(/^bloomkit: the input ended after 50,000 keys without the --end-marker line.*\[CLI_INCOMPLETE\]\n$/)
    expect((await bitsOf(target)).equals(before)).toBe(true)
    expect((await runCli(['check', ...target, 'old:0', `old:${OLD_KEYS - 1}`])).stdout).toBe(`old:0\tpresent\nold:${OLD_KEYS - 1}\tpresent\n`)
    const succeeded = await nightly(60_000, 0)
    expect(succeeded).toEqual({ code: 0, stderr: '' })
    expect((await bitsOf(target)).equals(before)).toBe(false)
    expect((await runCli(['check', ...target, 'new:0', 'new:59999'])).stdout).toBe('new:0\tpresent\nnew:59999\tpresent\n')
  })
})
