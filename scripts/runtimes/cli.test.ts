import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeSnapshot } from '@bloomkit/core/store'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { afterAll, expect, test } from 'vitest'
import { runCli, tempFolder } from '../../packages/cli/test/support/run-cli.js'

// The CLI's build, check and Ctrl-C paths, in child processes of this runtime's Node (runCli starts
// `process.execPath`): the runtimes projects' smoke test of the `bloomkit` command. The CLI's own
// tests (packages/cli/test) cover each path in depth on the Node that runs `npm test`.
const folder = tempFolder('bloomkit-runtimes-cli-')
const at = (name: string) => join(folder.path, name)
afterAll(() => folder.remove())

const keys = [...Array.from({ length: 5_000 }, (_, i) => `user:${i}`), 'café', '日本語', '😀', 'x'.repeat(200)]
const sizing = ['--capacity', '10000', '--error-rate', '0.01']

test('build from a file gives the library’s snapshot on this runtime, and check answers from it', async () => {
  writeFileSync(at('keys.txt'), `${keys.join('\n')}\n`)
  const built = await runCli(['build', at('keys.txt'), '--out', at('keys.blmk'), ...sizing])
  expect(built.stderr).toMatch(/built .*keys\.blmk: 5,004 keys in/)
  expect(built.code).toBe(0)
  const { parameters, payload } = decodeSnapshot(readFileSync(at('keys.blmk')))
  const library = await MemoryBloomFilter.fromParameters(parameters)
  library.addMany(keys)
  expect(Buffer.from(payload).equals(Buffer.from(decodeSnapshot(library.export()).payload))).toBe(true)

  const check = await runCli(['check', at('keys.blmk'), 'user:0', '日本語', 'nobody:1'])
  expect(check.stdout).toBe('user:0\tpresent\n日本語\tpresent\nnobody:1\tabsent\n')
  expect(check.code).toBe(1)
})

test('build into a LevelDB folder and check it (classic-level loads in the CLI’s process)', async () => {
  const target = `level:${at('db')}`
  expect((await runCli(['build', at('keys.txt'), '--out', target, ...sizing])).code).toBe(0)
  const check = await runCli(['check', target, 'user:4999', 'nobody:2'])
  expect(check.stdout).toBe('user:4999\tpresent\nnobody:2\tabsent\n')
  expect(check.code).toBe(1)
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
  expect(readdirSync(folder.path).filter((name) => name.startsWith('.interrupted.blmk.'))).toEqual([])
})
