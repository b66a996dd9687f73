import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { BIN, runCli, tempFolder } from './support/run-cli.js'

const folder = tempFolder()
const at = (name: string) => join(folder.path, name)
const sizing = ['--capacity', '1000', '--error-rate', '0.01']

beforeAll(async () => {
  writeFileSync(at('keys.txt'), 'a\nb\nc\n')
  expect((await runCli(['build', at('keys.txt'), '--out', at('abc.blmk'), ...sizing])).code).toBe(0)
})
afterAll(() => folder.remove())

/** What these tests use of the `level` package's `Level`. */
type LevelClass = new (location: string) => { open(): Promise<void>; put(key: string, value: string): Promise<void>; get(key: string): Promise<string | undefined>; close(): Promise<void> }

/** Every error is one line on standard error, `bloomkit: … [CODE]`, and exit code 2. */
function expectOneLineError(result: { code: number | null; stderr: string; stdout: string }, pattern: RegExp): void {
  expect(result.stderr).toMatch(/^bloomkit: [^\n]+ \[[A-Z_]+\]\n$/)
  expect(result.stderr).toMatch(pattern)
  expect(result.stdout).toBe('')
  expect(result.code).toBe(2)
}

describe('one error style', () => {
  test('a mistyped --output is named as typed (not reported as a missing --out), with the suggestion on the same line', async () => {
    const result = await runCli(['build', at('keys.txt'), '--output', at('x.blmk'), ...sizing])
    expectOneLineError(result, /^bloomkit: unknown option '--output' \(Did you mean --out\?\); see bloomkit build --help \[CLI_USAGE\]/)
    expectOneLineError(await runCli(['build', at('keys.txt'), ...sizing]), /build needs -o, --out <target>.*\[CLI_USAGE\]/)
  })

  test('commander\'s own errors (unknown command, missing argument, bad choice, bad number) are one coded line', async () => {
    expectOneLineError(await runCli(['bild']), /^bloomkit: unknown command 'bild' \(Did you mean build\?\); see bloomkit --help \[CLI_USAGE\]/)
    expectOneLineError(await runCli(['build']), /^bloomkit: missing required argument 'input'; see bloomkit build --help \[CLI_USAGE\]/)
    expectOneLineError(await runCli(['build', at('keys.txt'), '--out', at('x.blmk'), '--format', 'xml']), /'--format <format>' argument 'xml' is invalid. Allowed choices are lines, csv, jsonl;/)
    expectOneLineError(await runCli(['check', at('abc.blmk'), '--timeout', 'soon']), /'--timeout <ms>' argument 'soon' is invalid. expected an integer from 1/)
  })

  test('--help lists the choices of --format and --layout and shows each default once', async () => {
    const help = await runCli(['build', '--help'])
    expect(help.code).toBe(0)
    const text = help.stdout.replaceAll(/\s+/g, ' ')
    expect(text).toContain('--format <format> how keys are laid out (choices: "lines", "csv", "jsonl", default: "lines")')
    expect(text).toContain('(choices: "blocked", "classic")')
    expect(text.match(/a quarter of RAM/g)).toHaveLength(1)
    expect(text.match(/default/g)!.length).toBeLessThan(12)
    expect(text).toMatch(/--memory <bytes> .*\(default: [\d.]+ [KMGT]iB, a quarter of RAM\)/)
  })
})

describe('targets say what they are', () => {
  test('a host:port address is refused with the schemes listed, and no file is written', async () => {
    const result = await runCli(['build', at('keys.txt'), '--out', 'localhost:7501', '--name', 'q', ...sizing], { cwd: folder.path })
    expectOneLineError(result, /--out "localhost:7501" looks like a host:port address; write redis:\/\/localhost:7501, rediss:\/\/localhost:7501 \(TLS\) or redis\+cluster:\/\/localhost:7501, or \.\/localhost:7501 for a snapshot file/)
    expect(existsSync(at('localhost:7501'))).toBe(false)
    expectOneLineError(await runCli(['check', '10.0.0.1:6379/2', 'k']), /looks like a host:port address/)
    expectOneLineError(await runCli(['inspect', '[::1]:6379']), /looks like a host:port address/)
    // Written as a path, such a name is a file.
    expect((await runCli(['build', at('keys.txt'), '--out', './localhost:7501', ...sizing], { cwd: folder.path })).code).toBe(0)
    expect(existsSync(at('localhost:7501'))).toBe(true)
  })

  test('--name, --ttl, --timeout and --to-name on a file or LevelDB target are errors naming the flag', async () => {
    expectOneLineError(await runCli(['build', at('keys.txt'), '--out', at('n.blmk'), '--name', 'q', ...sizing]), /^bloomkit: --name applies to Redis targets only; --out ".*n\.blmk" is a snapshot file \[CLI_USAGE\]/)
    expectOneLineError(await runCli(['build', at('keys.txt'), '--out', `level:${at('n-db')}`, '--ttl', '60', ...sizing]), /--ttl applies to Redis targets only; --out "level:.*" is a LevelDB folder/)
    expectOneLineError(await runCli(['check', at('abc.blmk'), '--timeout', '100', 'a']), /--timeout applies to Redis targets only/)
    expectOneLineError(await runCli(['copy', at('abc.blmk'), at('copy.blmk'), '--to-name', 'x']), /--to-name applies to Redis targets only/)
    expect(existsSync(at('n.blmk')) || existsSync(at('n-db')) || existsSync(at('copy.blmk'))).toBe(false)
  })

  test('a LevelDB folder given without level: gets the hint', async () => {
    expect((await runCli(['build', at('keys.txt'), '--out', `level:${at('db')}`, ...sizing])).code).toBe(0)
    expectOneLineError(await runCli(['check', at('db'), 'a']), /"[^"]*db" is a folder, not a snapshot file \(a LevelDB folder\); for a LevelDB folder write level:.*db \[CLI_TARGET\]/)
    expectOneLineError(await runCli(['build', at('keys.txt'), '--out', at('db'), '--replace', ...sizing]), /is a folder, not a snapshot file \(a LevelDB folder\); for a LevelDB folder write level:/)
    expect((await runCli(['check', `level:${at('db')}`, 'a'])).code).toBe(0)
  })
})

describe('bloomkit check', () => {
  test('--keys-file reads keys from a file; keys as arguments and --keys-file together are refused', async () => {
    writeFileSync(at('suspects.txt'), 'a\nz\n')
    const result = await runCli(['check', at('abc.blmk'), '--keys-file', at('suspects.txt')])
    expect(result.stdout).toBe('a\tpresent\nz\tabsent\n')
    expect(result.code).toBe(1)
    expectOneLineError(await runCli(['check', at('abc.blmk'), '--keys-file', at('suspects.txt'), 'a']), /give keys as arguments or with --keys-file, not both/)
    expectOneLineError(await runCli(['check', at('abc.blmk'), '--keys-file', at('missing.txt')]), /input ".*missing\.txt" cannot be read.*\[CLI_INPUT\]/)
  })

  test('on a terminal with no keys, check says it reads standard input, then answers the keys typed', async () => {
    // script(1) gives check a pseudo-terminal; what we write is "typed", and Ctrl-D (\x04) ends it.
    const child = spawn('script', ['-qec', `${process.execPath} ${BIN} check ${at('abc.blmk')}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    const done = new Promise<number | null>((resolve) => child.on('close', resolve))
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8')
        if (output.includes('end with Ctrl-D')) resolve()
      })
    })
    child.stdin.write('a\nz\n\x04')
    await done
    expect(output).toContain('bloomkit check: reading keys from standard input, one per line; end with Ctrl-D (or give keys as arguments, or --keys-file <path>)')
    expect(output).toMatch(/a\tpresent\r?\n/)
    expect(output).toMatch(/z\tabsent\r?\n/)
  })
})

describe('the first hour: hints and suffixes (issue 37 item 2)', () => {
  test('check and remove with a key that is also a file: the key is checked as given, and stderr names --keys-file', async () => {
    const result = await runCli(['check', at('abc.blmk'), at('keys.txt')])
    expect(result.stdout).toBe(`${at('keys.txt')}\tabsent\n`)
    expect(result.stderr).toBe(`bloomkit check: "${at('keys.txt')}" is taken as a key, though a file of that name is here; to read keys from it, give --keys-file ${at('keys.txt')}\n`)
    expect(result.code).toBe(1)
    // A key that names no file gets no hint.
    expect((await runCli(['check', at('abc.blmk'), 'a', 'nothing-by-this-name.txt'])).stderr).toBe('')
    expect((await runCli(['build', at('keys.txt'), '--out', `level:${at('hint-db')}`, '--counting', ...sizing])).code).toBe(0)
    const removed = await runCli(['remove', `level:${at('hint-db')}`, at('keys.txt')])
    expect(removed.stderr).toContain(`bloomkit remove: "${at('keys.txt')}" is taken as a key, though a file of that name is here; to read keys from it, give --keys-file ${at('keys.txt')}\n`)
  })

  test('on a terminal, build - says it reads standard input and draws no bar over the typed keys', async () => {
    const out = at('typed.blmk')
    // script(1) gives build a pseudo-terminal for stdin and stderr (where the bar would be drawn).
    const child = spawn('script', ['-qec', `${process.execPath} ${BIN} build - --out ${out} ${sizing.join(' ')}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    const done = new Promise<number | null>((resolve) => child.on('close', resolve))
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8')
        if (output.includes('end with Ctrl-D')) resolve()
      })
    })
    child.stdin.write('typed-1\ntyped-2\n')
    await new Promise((resolve) => setTimeout(resolve, 1500)) // past cli-progress's first redraw, had it drawn one
    child.stdin.write('\x04')
    await done
    expect(output).toContain('bloomkit build: reading keys from standard input, one per line; end with Ctrl-D (or give a file of keys instead of -)')
    // cli-progress draws with cursor moves and line clears; nothing else here writes an escape sequence.
    expect(output).not.toContain('\u001b[')
    expect(output).toMatch(/built .*typed\.blmk: 2 keys/)
    expect((await runCli(['check', out, 'typed-1', 'typed-2'])).stdout).toBe('typed-1\tpresent\ntyped-2\tpresent\n')
  })

  test('--capacity, --expect and --min-keys take decimal suffixes (2M is 2,000,000), as --memory takes 4G', async () => {
    const size = JSON.parse((await runCli(['size', '--capacity', '2M', '--error-rate', '0.01', '--json'])).stdout)
    expect(size.capacity).toBe(2_000_000)
    expect(JSON.parse((await runCli(['size', '--capacity', '1.1m', '--error-rate', '0.01', '--json'])).stdout).capacity).toBe(1_100_000)
    expect(JSON.parse((await runCli(['size', '--capacity', '2.5k', '--error-rate', '0.01', '--json'])).stdout).capacity).toBe(2_500)
    expect(JSON.parse((await runCli(['size', '--capacity', '1e9', '--error-rate', '0.01', '--json'])).stdout).capacity).toBe(1e9)
    expectOneLineError(await runCli(['size', '--capacity', '1.5', '--error-rate', '0.01']), /'--capacity <keys>' argument '1\.5' is invalid\. expected an integer from 1 to \d+ \(as 2000000, 2_000_000, 2e6 or 2M\)/)
    expectOneLineError(await runCli(['size', '--capacity', '2X', '--error-rate', '0.01']), /argument '2X' is invalid/)
    const built = await runCli(['build', at('keys.txt'), '--out', at('suffix.blmk'), '--capacity', '1k', '--error-rate', '0.01', '--expect', '0.003k', '--min-keys', '3', '--json'])
    expect(built.code).toBe(0)
    expect(JSON.parse(built.stdout).keys).toBe(3)
  })
})

describe('bloomkit delete', () => {
  test('deletes a file and a LevelDB folder with --yes; without a terminal and without --yes it refuses and deletes nothing', async () => {
    expect((await runCli(['build', at('keys.txt'), '--out', at('gone.blmk'), ...sizing])).code).toBe(0)
    expectOneLineError(await runCli(['delete', at('gone.blmk')]), /^bloomkit: delete .*gone\.blmk: pass --yes to delete without a terminal to ask on \[CLI_USAGE\]/)
    expect(existsSync(at('gone.blmk'))).toBe(true)
    const deleted = await runCli(['delete', at('gone.blmk'), '--yes'])
    expect(deleted.stderr).toBe(`deleted ${at('gone.blmk')}\n`)
    expect(deleted.code).toBe(0)
    expect(existsSync(at('gone.blmk'))).toBe(false)
    expect((await runCli(['build', at('keys.txt'), '--out', `level:${at('gone-db')}`, ...sizing])).code).toBe(0)
    expect((await runCli(['delete', `level:${at('gone-db')}`, '-y'])).code).toBe(0)
    expect(existsSync(at('gone-db'))).toBe(false)
    const nothing = await runCli(['delete', at('gone.blmk'), '--yes'])
    expect(nothing.stderr).toMatch(/^nothing to delete at /)
    expect(nothing.code).toBe(0)
  })

  test('a folder that is not a LevelDB folder is not deleted', async () => {
    mkdirSync(at('precious'))
    writeFileSync(at('precious/notes.txt'), 'keep me')
    expectOneLineError(
      await runCli(['delete', `level:${at('precious')}`, '--yes']),
      /level:.*precious is a folder of 1 entry, not a LevelDB folder \(it has no CURRENT file, nor a layered filter's manifest\); not deleting it \[CLI_TARGET\]/,
    )
    expect(readdirSync(at('precious'))).toEqual(['notes.txt'])
  })

  test('a file that is not a bloomkit snapshot (a key list, text, gzip, binary, empty) is refused by what it is, before anything is asked, and kept', async () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => `user:${i}`).join('\n')
    writeFileSync(at('ids.txt'), ids)
    writeFileSync(at('ids.txt.gz'), gzipSync(ids))
    writeFileSync(at('notes.txt'), 'remember the milk\n')
    writeFileSync(at('empty.txt'), '')
    writeFileSync(at('blob.bin'), Buffer.from([0xde, 0xad, 0xbe, 0xef, 0, 1, 2]))
    for (const [file, what] of [
      ['ids.txt', 'a text file of 1\\.0 MiB'],
      ['ids.txt.gz', 'a gzip file of \\d+\\.\\d KiB'],
      ['notes.txt', 'a text file of 18 byte\\(s\\)'],
      ['empty.txt', 'an empty file'],
      ['blob.bin', 'a binary file of 7 byte\\(s\\) \\(starting de ad be ef\\)'],
    ]) {
      const before = readFileSync(at(file))
      const refusal = new RegExp(`^bloomkit: ".*${file.replaceAll('.', '\\.')}" is ${what}, not a bloomkit snapshot \\(those start with "BLMK"\\); not deleting it \\[CLI_TARGET\\]\\n$`)
      expectOneLineError(await runCli(['delete', at(file), '--yes']), refusal)
      // Without --yes and without a terminal the refusal comes first, not "pass --yes".
      expectOneLineError(await runCli(['delete', at(file)]), refusal)
      expect(readFileSync(at(file)).equals(before), file).toBe(true)
    }
    // On a terminal: refused before the question, so no "y" can delete it.
    const asked = spawnSync('script', ['-qec', `${process.execPath} ${BIN} delete ${at('notes.txt')}`, '/dev/null'], { input: 'y\n', encoding: 'utf8' })
    expect(asked.stdout).not.toContain('[y/N]')
    expect(asked.stdout).toContain('not a bloomkit snapshot')
    expect(readFileSync(at('notes.txt'), 'utf8')).toBe('remember the milk\n')
    // A snapshot file named as a LevelDB folder is refused with the way to name it.
    expectOneLineError(await runCli(['delete', `level:${at('abc.blmk')}`, '--yes']), /abc\.blmk is a bloomkit snapshot file, not a folder \(delete it as .*abc\.blmk, without level:\); not deleting it \[CLI_TARGET\]/)
    expect(existsSync(at('abc.blmk'))).toBe(true)
  })

  test('a bloomkit snapshot is deleted whatever its kind, and also when damaged (that is how it is cleared)', async () => {
    expect((await runCli(['build', at('keys.txt'), '--out', at('counting.blmk'), '--counting', ...sizing])).code).toBe(0)
    const layered = await LayeredMemoryFilter.create({ capacity: 100, errorRate: 0.01, growth: 2 })
    layered.addMany(['a', 'b'])
    writeFileSync(at('layered.blmk'), layered.export())
    const damaged = readFileSync(at('abc.blmk'))
    writeFileSync(at('damaged.blmk'), damaged.subarray(0, damaged.length - 100))
    for (const file of ['counting.blmk', 'layered.blmk', 'damaged.blmk']) {
      const deleted = await runCli(['delete', at(file), '--yes'])
      expect(deleted.stderr, file).toBe(`deleted ${at(file)}\n`)
      expect(existsSync(at(file))).toBe(false)
    }
  })

  test('a LevelDB of other data, or an empty one, is refused with the library\'s reason and kept; a layered or damaged filter folder is deleted', async () => {
    // The `level` package as the LevelDB backend resolves it (the CLI itself does not depend on it).
    const { Level } = (await import(createRequire(fileURLToPath(new URL('../../level-backend/package.json', import.meta.url))).resolve('level'))) as { Level: LevelClass }
    const other = new Level(at('other-db'))
    await other.put('user:1', 'Ada')
    await other.close()
    const empty = new Level(at('empty-db'))
    await empty.open()
    await empty.close()
    for (const [db, why] of [
      ['other-db', /is not a bloomkit filter: it holds other data \(first key "user:1"\)/],
      ['empty-db', /no bloomkit filter here \(the database is empty\)/],
    ] as const) {
      const refused = await runCli(['delete', `level:${at(db)}`, '--yes'])
      expectOneLineError(refused, /^bloomkit: level:.* is a LevelDB folder that does not open as a bloomkit filter \(remove it yourself if it is one you mean to delete\); not deleting it: .* \[CLI_TARGET\]/)
      expect(refused.stderr).toMatch(why)
      expect(existsSync(join(at(db), 'CURRENT'))).toBe(true)
    }
    const reopened = new Level(at('other-db'))
    expect(await reopened.get('user:1')).toBe('Ada')
    await reopened.close()
    const scalable = await LevelBloomFilter.create(at('layered-db'), { capacity: 100, errorRate: 0.01, growth: 2 })
    await scalable.addMany(['a', 'b'])
    await scalable.close()
    for (const db of ['lost-db', 'anchor-db']) expect((await runCli(['build', at('keys.txt'), '--out', `level:${at(db)}`, ...sizing])).code).toBe(0)
    // Every record gone (LevelDB lost its log): BLOOM_DATA_LOST, which only a filter's folder gives.
    for (const file of readdirSync(at('lost-db'))) if (/\.(log|ldb)$/.test(file)) rmSync(join(at('lost-db'), file))
    expect((await runCli(['check', `level:${at('lost-db')}`, 'a'])).stderr).toMatch(/\[BLOOM_DATA_LOST\]/)
    // bloomkit's anchor file damaged: BLOOM_CORRUPT_STORE, from a folder that holds bloomkit's anchor.
    const anchor = join(at('anchor-db'), 'BLOOMKIT-ANCHOR')
    writeFileSync(anchor, readFileSync(anchor).map((byte, i) => (i === 6 ? byte ^ 0xff : byte)))
    expect((await runCli(['check', `level:${at('anchor-db')}`, 'a'])).stderr).toMatch(/\[BLOOM_CORRUPT_STORE\]/)
    for (const db of ['layered-db', 'lost-db', 'anchor-db']) {
      const deleted = await runCli(['delete', `level:${at(db)}`, '--yes'])
      expect(deleted.stderr, db).toBe(`deleted level:${at(db)}\n`)
      expect(existsSync(at(db))).toBe(false)
    }
  }, 180_000)
})

describe('debris of killed runs', () => {
  /** The id of a process that has ended (a killed build's, as far as a later run can tell). */
  const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!

  test('a killed write\'s temporary file beside a snapshot file is cleared by the next build, and by delete; a running writer\'s is left alone', async () => {
    const dead = at(`.debris.blmk.${deadPid()}.tmp`)
    const running = at(`.debris.blmk.${process.pid}.tmp`)
    writeFileSync(dead, 'half a snapshot')
    writeFileSync(running, 'another build, still running')
    expect((await runCli(['build', at('keys.txt'), '--out', at('debris.blmk'), ...sizing])).code).toBe(0)
    expect(existsSync(dead)).toBe(false)
    expect(existsSync(running)).toBe(true)
    writeFileSync(dead, 'half a snapshot')
    expect((await runCli(['delete', at('debris.blmk'), '--yes'])).code).toBe(0)
    expect(readdirSync(folder.path).filter((name) => name.includes('debris'))).toEqual([`.debris.blmk.${process.pid}.tmp`])
  })

  test('SIGKILL mid-build leaves the target as it was and a temporary file, which the next build clears', async () => {
    const out = at('killed.blmk')
    expect((await runCli(['build', at('keys.txt'), '--out', out, ...sizing])).code).toBe(0)
    const before = readFileSync(out)
    const keys = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `k:${i}`).join('\n'))
    let pid = 0
    const killed = await runCli(['build', '-', '--out', out, '--replace', '--allow-shrink'], {
      onStart: (child) => {
        pid = child.pid!
        // Written through a pipe, the callback comes once bloomkit has read most of it: it is mid-build.
        child.stdin!.write(keys, () => setTimeout(() => child.kill('SIGKILL'), 100))
      },
    })
    expect(killed.code).toBe(null)
    expect(readFileSync(out).equals(before)).toBe(true)
    expect(existsSync(at(`.killed.blmk.${pid}.tmp`))).toBe(true)
    expect((await runCli(['build', at('keys.txt'), '--out', out, '--replace'])).code).toBe(0)
    expect(readdirSync(folder.path).filter((name) => name.includes('killed'))).toEqual(['killed.blmk'])
  })

  /** Runs `bloomkit build <args>`, SIGKILLed as soon as the LevelDB import's staging folder `<target>.new-PID` appears. */
  async function killedMidImport(args: readonly string[], target: string): Promise<{ code: number | null; staging: string }> {
    let staging = ''
    const killed = await runCli(args, {
      onStart: (child) => {
        child.stdin!.end()
        staging = `${target}.new-${child.pid}`
        const poll = setInterval(() => {
          if (!existsSync(staging)) return
          clearInterval(poll)
          child.kill('SIGKILL')
        }, 5)
        child.on('close', () => clearInterval(poll))
      },
    })
    return { code: killed.code, staging }
  }

  test('SIGKILL mid-import of a LevelDB build, new target or --replace: no folder under the target name (or the old one, answering as before); the next build clears the debris', async () => {
    // A filter of ~36 MiB of bits: its import takes long enough to be caught with the staging folder half written.
    const big = ['--capacity', '20000000', '--error-rate', '0.001']
    const fresh = at('killed-new-db')
    const first = await killedMidImport(['build', at('keys.txt'), '--out', `level:${fresh}`, ...big], fresh)
    expect(first.code).toBe(null)
    expect(existsSync(first.staging)).toBe(true)
    expect(existsSync(fresh)).toBe(false)
    expectOneLineError(await runCli(['check', `level:${fresh}`, 'a']), /not found|no filter|does not exist/i)
    // The next build of that target needs no --replace (it never existed) and clears what the killed one left.
    expect((await runCli(['build', at('keys.txt'), '--out', `level:${fresh}`, ...sizing])).code).toBe(0)
    expect(readdirSync(folder.path).filter((name) => name.startsWith('killed-new-db'))).toEqual(['killed-new-db'])

    const kept = at('killed-replace-db')
    writeFileSync(at('kept.txt'), 'kept:1\nkept:2\n')
    expect((await runCli(['build', at('kept.txt'), '--out', `level:${kept}`, ...sizing])).code).toBe(0)
    const second = await killedMidImport(['build', at('keys.txt'), '--out', `level:${kept}`, '--replace', '--allow-shrink', ...big], kept)
    expect(second.code).toBe(null)
    expect(existsSync(second.staging)).toBe(true)
    expect((await runCli(['check', `level:${kept}`, 'kept:1', 'kept:2', 'a'])).stdout).toBe('kept:1\tpresent\nkept:2\tpresent\na\tabsent\n')
    expect((await runCli(['build', at('keys.txt'), '--out', `level:${kept}`, '--replace', '--allow-shrink', ...sizing])).code).toBe(0)
    expect(readdirSync(folder.path).filter((name) => name.startsWith('killed-replace-db'))).toEqual(['killed-replace-db'])
    expect((await runCli(['check', `level:${kept}`, 'kept:1', 'a'])).stdout).toBe('kept:1\tabsent\na\tpresent\n')
  }, 60_000)

  test('beside a LevelDB folder: a half-imported .new-PID folder is removed, a .old-PID folder is put back when the swap was cut short', async () => {
    expect((await runCli(['build', at('keys.txt'), '--out', `level:${at('swap-db')}`, ...sizing])).code).toBe(0)
    const half = at(`swap-db.new-${deadPid()}`)
    mkdirSync(half)
    writeFileSync(join(half, 'CURRENT'), 'MANIFEST-000001\n')
    // Killed between its two renames: the old folder moved aside, the new one not yet in place.
    const { renameSync } = await import('node:fs')
    renameSync(at('swap-db'), at(`swap-db.old-${deadPid()}`))
    const check = await runCli(['check', `level:${at('swap-db')}`, 'a'])
    expect(check.code).toBe(2)
    writeFileSync(at('more.txt'), 'a\nb\nc\nd\n')
    const rebuilt = await runCli(['build', at('more.txt'), '--out', `level:${at('swap-db')}`, '--replace'])
    expect(rebuilt.stderr).toMatch(/built .*4 keys/)
    expect(readdirSync(folder.path).filter((name) => name.startsWith('swap-db'))).toEqual(['swap-db'])
    expect((await runCli(['check', `level:${at('swap-db')}`, 'a', 'd'])).stdout).toBe('a\tpresent\nd\tpresent\n')
  })
})

describe('the seed is shown only on request', () => {
  test('inspect and build --json leave the seed out unless --show-seed', async () => {
    const out = at('secret.blmk')
    const built = await runCli(['build', at('keys.txt'), '--out', out, ...sizing, '--seed', '123456789', '--json'])
    expect(built.code).toBe(0)
    expect(built.stdout).not.toContain('123456789')
    expect(JSON.parse(built.stdout).parameters).toEqual({ bits: expect.any(Number), hashes: expect.any(Number), shards: 1, layout: 'blocked', scheme: 2 })
    const shown = await runCli(['build', at('keys.txt'), '--out', out, '--replace', '--json', '--show-seed'])
    expect(JSON.parse(shown.stdout).parameters.seed).toBe(123456789)
    for (const args of [['inspect', out], ['inspect', out, '--json']]) {
      const result = await runCli(args)
      expect(result.code).toBe(0)
      expect(result.stdout).not.toContain('123456789')
      expect(result.stdout).not.toMatch(/seed/)
    }
    expect((await runCli(['inspect', out, '--show-seed'])).stdout).toMatch(/^seed +123456789$/m)
    expect(JSON.parse((await runCli(['inspect', out, '--json', '--show-seed'])).stdout).parameters.seed).toBe(123456789)
  })
})
