import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { spawnSync } from 'node:child_process'
import { decodeSnapshot } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BIN, runCli, tempFolder } from './support/run-cli.js'

const folder = tempFolder()
const at = (name: string) => join(folder.path, name)
afterAll(() => folder.remove())

/**
 * The snapshot the library itself makes from these keys with the seed of the built `file` (a build
 * without --seed picks a random one): what every build must reproduce byte for byte.
 */
async function librarySnapshot(keys: Iterable<string | Uint8Array>, capacity: number, errorRate: number, file: string): Promise<Uint8Array> {
  const filter = await MemoryBloomFilter.create({ capacity, errorRate, seed: decodeSnapshot(readFileSync(file)).parameters.seed })
  filter.addMany(keys)
  return filter.export()
}

function payloadOf(file: string): Uint8Array {
  return decodeSnapshot(readFileSync(file)).payload
}

describe('bloomkit build into a snapshot file', () => {
  const million = Array.from({ length: 1_000_000 }, (_, i) => `user:${i}`)
  beforeAll(() => {
    writeFileSync(at('million.txt'), `${million.join('\n')}\n`)
  })

  test('a 1M-line file gives the same bits as addMany of the same keys', async () => {
    const result = await runCli(['build', at('million.txt'), '--out', at('million.blmk'), '--capacity', '1000000', '--error-rate', '0.01'])
    expect(result.stderr).toMatch(/built .*million\.blmk: 1,000,000 keys in/)
    expect(result.code).toBe(0)
    const expected = await librarySnapshot(million, 1_000_000, 0.01, at('million.blmk'))
    expect(Buffer.from(payloadOf(at('million.blmk'))).equals(Buffer.from(decodeSnapshot(expected).payload))).toBe(true)
  })

  test('passes over groups of shards under a small --memory give the same bits as one pass', async () => {
    const result = await runCli([
      'build', at('million.txt'), '--out', at('passes.blmk'), '--capacity', '1000000', '--error-rate', '0.01', '--shards', '8', '--memory', '1M', '--json', '--show-seed',
    ])
    expect(result.code).toBe(0)
    const summary = JSON.parse(result.stdout)
    expect(summary.passes).toBeGreaterThan(1)
    expect(summary.keys).toBe(1_000_000)
    const filter = await MemoryBloomFilter.fromParameters(summary.parameters)
    filter.addMany(million)
    expect(Buffer.from(payloadOf(at('passes.blmk'))).equals(Buffer.from(filter.export().subarray(40, -4)))).toBe(true)
  })

  test('--progress draws the bar on standard error: keys, keys/s, bytes read of the size, ETA', async () => {
    const result = await runCli(['build', at('million.txt'), '--out', at('progress.blmk'), '--capacity', '1000000', '--error-rate', '0.01', '--progress'])
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/100% \| 1\.00M keys \| [\d.]+[kMG]? keys\/s \| 11\.\d MiB of 11\.\d MiB \| ETA \d+s/)
    expect(result.stdout).toBe('')
  })

  test('on a terminal the bar is drawn without --progress; --quiet silences the bar and the summary, even with --progress', async () => {
    // script(1) runs the command on a pseudo-terminal, as a user's shell would.
    const onTerminal = spawnSync('script', ['-qec', `${process.execPath} ${BIN} build ${at('million.txt')} --out ${at('tty.blmk')} --capacity 1000000 --error-rate 0.01`, '/dev/null'], { encoding: 'utf8' })
    expect(onTerminal.status).toBe(0)
    expect(onTerminal.stdout).toMatch(/100% \| 1\.00M keys \| [\d.]+[kMG]? keys\/s \| 11\.\d MiB of 11\.\d MiB/)
    expect(onTerminal.stdout).toMatch(/built .*tty\.blmk: 1,000,000 keys in/)
    const quiet = await runCli(['build', at('million.txt'), '--out', at('quiet.blmk'), '--capacity', '1000000', '--error-rate', '0.01', '--quiet', '--progress'])
    expect(quiet.code).toBe(0)
    expect(quiet.stderr).toBe('')
    expect(quiet.stdout).toBe('')
    expect(payloadOf(at('quiet.blmk')).length).toBeGreaterThan(0)
  })

  test('gzip input (by extension), CRLF, blank lines and a last line without newline', async () => {
    writeFileSync(at('keys.txt.gz'), gzipSync('alpha\r\n\r\nbeta\n\n\ngamma\r\ndelta'))
    const result = await runCli(['build', at('keys.txt.gz'), '--out', at('gz.blmk'), '--capacity', '1000', '--error-rate', '0.01', '--json'])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ keys: 4, skipped: 3 })
    const expected = await librarySnapshot(['alpha', 'beta', 'gamma', 'delta'], 1000, 0.01, at('gz.blmk'))
    expect(Buffer.from(payloadOf(at('gz.blmk')))).toEqual(Buffer.from(decodeSnapshot(expected).payload))
  })

  test('invalid UTF-8 lines are keys as their bytes, and check finds them', async () => {
    const odd = Buffer.from([0x66, 0xff, 0xfe, 0x6f])
    writeFileSync(at('bytes.txt'), Buffer.concat([odd, Buffer.from('\nplain\n')]))
    const result = await runCli(['build', at('bytes.txt'), '--out', at('bytes.blmk'), '--capacity', '1000', '--error-rate', '0.001'])
    expect(result.code).toBe(0)
    const expected = await librarySnapshot([odd, 'plain'], 1000, 0.001, at('bytes.blmk'))
    expect(Buffer.from(payloadOf(at('bytes.blmk')))).toEqual(Buffer.from(decodeSnapshot(expected).payload))
    const check = await runCli(['check', at('bytes.blmk'), '-'], { input: Buffer.concat([odd, Buffer.from('\nplain\n')]) })
    expect(check.code).toBe(0)
    expect(check.stdoutBytes.equals(Buffer.concat([odd, Buffer.from('\tpresent\nplain\tpresent\n')]))).toBe(true)
  })

  test('CSV: a named column, quoted fields with commas, quotes and newlines', async () => {
    writeFileSync(at('users.csv'), 'id,email\n1,"a@x.org"\n2,"b,with comma@x.org"\n3,"say ""hi""@x.org"\n\n4,"multi\nline@x.org"\n5,')
    const result = await runCli(['build', at('users.csv'), '--format', 'csv', '--column', 'email', '--out', at('csv.blmk'), '--capacity', '100', '--error-rate', '0.01', '--json'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ keys: 4, skipped: 1 })
    const expected = await librarySnapshot(['a@x.org', 'b,with comma@x.org', 'say "hi"@x.org', 'multi\nline@x.org'], 100, 0.01, at('csv.blmk'))
    expect(Buffer.from(payloadOf(at('csv.blmk')))).toEqual(Buffer.from(decodeSnapshot(expected).payload))
  })

  test('JSON lines: a field, numbers as their decimal text', async () => {
    writeFileSync(at('events.jsonl'), '{"id":"e1"}\n{"id":2}\n\n{"id":"e3","x":1}')
    const result = await runCli(['build', at('events.jsonl'), '--format', 'jsonl', '--column', 'id', '--out', at('jsonl.blmk'), '--capacity', '100', '--error-rate', '0.01'])
    expect(result.code).toBe(0)
    const expected = await librarySnapshot(['e1', '2', 'e3'], 100, 0.01, at('jsonl.blmk'))
    expect(Buffer.from(payloadOf(at('jsonl.blmk')))).toEqual(Buffer.from(decodeSnapshot(expected).payload))
  })

  test('standard input larger than --memory is spilled through a temporary LevelDB filter, same bits', async () => {
    const keys = million.slice(0, 200_000)
    const args = ['build', '-', '--out', at('spill.blmk'), '--capacity', '1000000', '--error-rate', '0.01', '--shards', '8', '--memory', '1M', '--json', '--show-seed']
    const result = await runCli(args, { input: `${keys.join('\n')}\n` })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const summary = JSON.parse(result.stdout)
    expect(summary.keys).toBe(200_000)
    const filter = await MemoryBloomFilter.fromParameters(summary.parameters)
    filter.addMany(keys)
    expect(Buffer.from(payloadOf(at('spill.blmk'))).equals(Buffer.from(filter.export().subarray(40, -4)))).toBe(true)
  })

  test('without --seed a random secret seed, kept by --replace; --seed picks one', async () => {
    const seedOf = (file: string) => decodeSnapshot(readFileSync(at(file))).parameters.seed
    const sizing = ['--capacity', '100', '--error-rate', '0.01']
    writeFileSync(at('few.txt'), 'one\ntwo\n')
    for (const file of ['seed-a.blmk', 'seed-b.blmk']) expect((await runCli(['build', at('few.txt'), '--out', at(file), ...sizing])).code).toBe(0)
    expect(seedOf('seed-a.blmk')).not.toBe(0)
    expect(seedOf('seed-a.blmk')).not.toBe(seedOf('seed-b.blmk'))
    const kept = seedOf('seed-a.blmk')
    expect((await runCli(['build', at('few.txt'), '--out', at('seed-a.blmk'), '--replace', ...sizing])).code).toBe(0)
    expect(seedOf('seed-a.blmk'), '--replace with sizing flags keeps the replaced filter\'s seed').toBe(kept)
    expect((await runCli(['build', at('few.txt'), '--out', at('seed-a.blmk'), '--replace'])).code).toBe(0)
    expect(seedOf('seed-a.blmk'), '--replace without sizing flags keeps all its parameters').toBe(kept)
    expect((await runCli(['build', at('few.txt'), '--out', at('seed-7.blmk'), '--seed', '7', ...sizing])).code).toBe(0)
    expect(seedOf('seed-7.blmk')).toBe(7)
  })

  test('standard input', async () => {
    const result = await runCli(['build', '-', '--out', at('stdin.blmk'), '--capacity', '100', '--error-rate', '0.01'], { input: 'one\ntwo\n' })
    expect(result.code).toBe(0)
    const expected = await librarySnapshot(['one', 'two'], 100, 0.01, at('stdin.blmk'))
    expect(Buffer.from(payloadOf(at('stdin.blmk')))).toEqual(Buffer.from(decodeSnapshot(expected).payload))
  })
})

describe('bloomkit build: bad input leaves no target behind', () => {
  const sizing = ['--capacity', '1000', '--error-rate', '0.01']
  const noTemp = () => expect(readdirSync(folder.path).filter((name) => name.endsWith('.tmp'))).toEqual([])

  test.each([
    ['a missing input file', ['build', 'missing.txt', '--out', 'out.blmk', ...sizing], /input "missing\.txt" cannot be read: ENOENT.*\[CLI_INPUT\]/],
    ['--capacity 0', ['build', 'million.txt', '--out', 'out.blmk', '--capacity', '0', '--error-rate', '0.01'], /--capacity <keys>' argument '0' is invalid/],
    ['an unknown flag', ['build', 'million.txt', '--out', 'out.blmk', '--fast', ...sizing], /unknown option '--fast'/],
    ['no sizing', ['build', 'million.txt', '--out', 'out.blmk'], /size the filter with --capacity and --error-rate/],
    ['a bad URL', ['build', 'million.txt', '--out', 'redis://localhost:notaport', '--name', 'x', ...sizing], /is not a valid Redis URL: port "notaport"/],
    ['an unknown scheme', ['build', 'million.txt', '--out', 'http://x', ...sizing], /unknown scheme/],
    ['a Redis target without --name', ['build', 'million.txt', '--out', 'redis://127.0.0.1:1', ...sizing], /needs --name/],
    ['a CSV column past the row', ['build', 'short.csv', '--format', 'csv', '--column', '3', '--out', 'out.blmk', ...sizing], /CSV line 2 has 2 column\(s\); --column 3 needs 3/],
    ['an unterminated CSV quote', ['build', 'open-quote.csv', '--format', 'csv', '--out', 'out.blmk', ...sizing], /malformed CSV/],
    ['a bad JSON line', ['build', 'bad.jsonl', '--format', 'jsonl', '--out', 'out.blmk', ...sizing], /JSON line 2 is not valid JSON/],
    ['invalid UTF-8 in JSON lines', ['build', 'bad-utf8.jsonl', '--format', 'jsonl', '--out', 'out.blmk', ...sizing], /JSON line 1 is not valid UTF-8/],
    ['a corrupt gzip file', ['build', 'broken.txt.gz', '--out', 'out.blmk', ...sizing], /input "broken\.txt\.gz" cannot be read: (unexpected end of file|incorrect header)/],
  ])('%s: a clear message, exit code 2, no file', async (_, args, message) => {
    writeFileSync(at('short.csv'), 'a,b,c\nd,e\n')
    writeFileSync(at('open-quote.csv'), 'a\n"b\n')
    writeFileSync(at('bad.jsonl'), '"ok"\n{nope\n')
    writeFileSync(at('bad-utf8.jsonl'), Buffer.from([0x22, 0xff, 0x22, 0x0a]))
    writeFileSync(at('broken.txt.gz'), Buffer.concat([gzipSync('a\nb\n').subarray(0, 12), Buffer.from('garbage')]))
    const result = await runCli(args, { cwd: folder.path })
    expect(result.stderr).toMatch(message)
    expect(result.code).toBe(2)
    expect(existsSync(at('out.blmk'))).toBe(false)
    noTemp()
  })

  test('Ctrl-C (SIGINT) mid-build: exit 130, the target untouched, no temporary file', async () => {
    writeFileSync(at('interrupted.blmk'), 'old contents')
    const result = await runCli(['build', '-', '--out', at('interrupted.blmk'), '--replace', ...sizing], {
      onStart: (child) => {
        child.stdin!.write('a\n')
        // Once the temporary file exists the build is under way (and its signal handler installed).
        const poll = setInterval(() => {
          if (!readdirSync(folder.path).some((name) => name.startsWith('.interrupted.blmk.'))) return
          clearInterval(poll)
          child.kill('SIGINT')
          // The next block of input notices the signal.
          setTimeout(() => child.stdin!.end('b\n'), 200)
        }, 20)
      },
    })
    expect(result.stderr).toMatch(/interrupted by SIGINT; the target is left as it was/)
    expect(result.code).toBe(130)
    expect(readFileSync(at('interrupted.blmk'), 'utf8')).toBe('old contents')
    noTemp()
  })

  test('an existing file is kept without --replace, and replaced with it', async () => {
    writeFileSync(at('keep.txt'), 'old\n')
    writeFileSync(at('new.txt'), 'new\n')
    expect((await runCli(['build', at('keep.txt'), '--out', at('keep.blmk'), ...sizing])).code).toBe(0)
    const before = readFileSync(at('keep.blmk'))
    const refused = await runCli(['build', at('new.txt'), '--out', at('keep.blmk'), ...sizing])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/keep\.blmk" exists; pass --replace to overwrite it \[CLI_TARGET\]/)
    expect(readFileSync(at('keep.blmk')).equals(before)).toBe(true)
    const failed = await runCli(['build', at('bad.jsonl'), '--format', 'jsonl', '--out', at('keep.blmk'), '--replace', ...sizing])
    expect(failed.code).toBe(2)
    expect(readFileSync(at('keep.blmk')).equals(before)).toBe(true)
    const replaced = await runCli(['build', at('new.txt'), '--out', at('keep.blmk'), '--replace'])
    expect(replaced.code).toBe(0)
    expect((await runCli(['check', at('keep.blmk'), 'new', 'old'])).stdout).toBe('new\tpresent\nold\tabsent\n')
    noTemp()
  })

  test('a target in a read-only folder (as on a full or read-only disk): message, exit 2, nothing written', async () => {
    const locked = at('read-only')
    mkdirSync(locked)
    chmodSync(locked, 0o555)
    // Root writes through permissions, so as root the binary runs without that power (it stays
    // root, so it can still read a clone inside a 0700 folder such as mktemp -d makes).
    const asRoot = process.getuid?.() === 0 ? { withoutPermissionOverride: true } : {}
    const result = await runCli(['build', at('million.txt'), '--out', join(locked, 'x.blmk'), ...sizing], asRoot)
    expect(result.stderr).toMatch(/cannot write ".*read-only\/x\.blmk": EACCES/)
    expect(result.code).toBe(2)
    expect(readdirSync(locked)).toEqual([])
  })
})
