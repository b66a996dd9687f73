import { execFile as execFileCallback } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { transform } from 'esbuild'
import { afterAll, expect, inject, test } from 'vitest'
import { startRedisServer } from '../../../test-support/redis-servers.js'
import { instrument, tsBlocks, type Claims } from '../../../test-support/readme-snippets.js'

const execFile = promisify(execFileCallback)
const workDir = fileURLToPath(new URL('../.readme-snippets/', import.meta.url))
// The README's examples continue one another (Usage sets up `db` and `users`, the next block
// writes through them), so they run in order as one module, against the throwaway redis-server.
const blocks = tsBlocks(new URL('../README.md', import.meta.url))

afterAll(() => rm(workDir, { recursive: true, force: true }))

/**
 * The documented addresses become a throwaway server's; PGlite starts from the data folder the
 * global setup initialised (initdb takes ~10 s here); the root README's page fetches the snapshot
 * its server example exported (pasted into one module, the page gets the bytes as they are).
 */
function onTestServices(code: string, address: { host: string; port: number }): string {
  return code
    .replace(/\{ host: 'localhost', port: 6379/g, `{ host: '${address.host}', port: ${address.port}`)
    .replace("await fetch('/names.blmk')", 'new Response(namesSnapshot)')
    .replace('new PGlite()', `new PGlite({ loadDataDir: new Blob([__readFileSync(${JSON.stringify(inject('pgliteDataDir'))})]) })`)
}

test('the README has examples with checked results', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(2)
  for (const block of blocks) expect(block).toMatch(/\/\/ /)
})

test('the README examples run in order and every `// value` holds', async () => {
  const address = inject('redisAddress')
  const code = onTestServices(blocks.join('\n'), address)
  expect(code).toContain(`port: ${address.port}`)
  expect(code).toContain('loadDataDir')
  await mkdir(workDir, { recursive: true })
  const file = `${workDir}readme.ts`
  // The README closes what it opens (its last block): nothing is added here.
  await writeFile(file, `import { readFileSync as __readFileSync } from 'node:fs'\n${instrument(code)}\n`)
  const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Claims }
  expect(__claims.length).toBe(13)
  for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
})

// Issue 23, item 6: a newcomer pastes the first steps of every README into one file, one after
// another: the root README's quick starts, then each package's first Usage example, then the
// guard's walk-through. They must not collide (distinct variable names, filter names and folders),
// and must close what they open: the file runs in a process of its own, which has to exit by itself.
const root = new URL('../../../', import.meta.url)
const firstSteps = [
  ...tsBlocks(new URL('README.md', root)),
  ...['core', 'memory-backend', 'level-backend', 'redis-backend'].map((name) => tsBlocks(new URL(`packages/${name}/README.md`, root))[0]),
  ...blocks,
]

/** The blocks as one module, as a user merges them: each import line once (names merged per module), then the code in order. */
function pasted(codes: readonly string[]): { module: string; declared: string[] } {
  const imports = new Map<string, Set<string>>()
  const bodies = codes.map((code) =>
    code.replace(/^import (type )?\{ ([^}]+) \} from '([^']+)'\n/gm, (_, type: string | undefined, names: string, from: string) => {
      const merged = imports.get(from) ?? new Set<string>()
      for (const name of names.split(',')) merged.add(`${type ?? ''}${name.trim()}`)
      imports.set(from, merged)
      return ''
    }),
  )
  const body = bodies.join('\n')
  const declared = [...body.matchAll(/^(?:const|let|type|class|async function\*?|function\*?)\s+(\w+)/gm)].map((match) => match[1])
  const head = [...imports].map(([from, names]) => `import { ${[...names].join(', ')} } from '${from}'`).join('\n')
  return { module: `${head}\n${body}`, declared }
}

test('the quick starts of every README, pasted one after another into one module, use distinct names, run, and exit by themselves', async () => {
  expect(firstSteps.length).toBe(6 + 4 + blocks.length)
  expect(firstSteps.every((block) => block !== undefined && block.length > 0)).toBe(true)
  const { module, declared } = pasted(firstSteps)
  const repeated = declared.filter((name, i) => declared.indexOf(name) !== i)
  expect(repeated, 'names declared by more than one pasted example').toEqual([])
  expect(declared.length).toBeGreaterThan(20)

  // A server of its own: the filter names the examples use are fixed, and the test above uses the shared one.
  const server = await startRedisServer()
  const cwd = await mkdtemp(join(tmpdir(), 'bloomkit-pasted-'))
  try {
    const code = onTestServices(module, server)
    const { code: js } = await transform(`import { readFileSync as __readFileSync } from 'node:fs'\n${instrument(code)}\nconsole.log(JSON.stringify(__claims))\n`, { loader: 'ts', format: 'esm', target: 'node20' })
    // Inside this package, so that its dependencies (every backend, ioredis, PGlite) resolve; run where './data/…' is a temp folder.
    await mkdir(workDir, { recursive: true })
    const file = `${workDir}pasted.mjs`
    await writeFile(file, js)
    const run = await execFile(process.execPath, [file], { cwd, timeout: 90_000 }).catch((error: { killed?: boolean; code?: number; stderr?: string }) => {
      throw new Error(error.killed === true ? 'the pasted quick starts did not exit within 90 s: something they open is left open' : `exit ${error.code}: ${error.stderr}`)
    })
    const claims = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Claims
    expect(claims.length).toBeGreaterThan(40)
    for (const [expression, actual, claimed] of claims) expect(actual, expression).toEqual(claimed)
  } finally {
    await server.stop()
    await rm(cwd, { recursive: true, force: true })
  }
}, 120_000)
