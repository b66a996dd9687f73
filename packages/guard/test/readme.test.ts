import { mkdir, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, inject, test } from 'vitest'
import { instrument, tsBlocks, type Claims } from '../../../test-support/readme-snippets.js'

const workDir = fileURLToPath(new URL('../.readme-snippets/', import.meta.url))
// The README's examples continue one another (Usage sets up `db` and `users`, the next block
// writes through them), so they run in order as one module, against the throwaway redis-server.
const blocks = tsBlocks(new URL('../README.md', import.meta.url))

afterAll(() => rm(workDir, { recursive: true, force: true }))

test('the README has examples with checked results', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(2)
  for (const block of blocks) expect(block).toMatch(/\/\/ /)
})

test('the README examples run in order and every `// value` holds', async () => {
  const { host, port } = inject('redisAddress')
  // The documented addresses become the throwaway server's; PGlite starts from the data folder
  // the global setup initialised (initdb takes ~10 s here).
  const code = blocks
    .join('\n')
    .replace(/\{ host: 'localhost', port: 6379/g, `{ host: '${host}', port: ${port}`)
    .replace('new PGlite()', `new PGlite({ loadDataDir: new Blob([__readFileSync(${JSON.stringify(inject('pgliteDataDir'))})]) })`)
  expect(code).toContain(`port: ${port}`)
  expect(code).toContain('loadDataDir')
  await mkdir(workDir, { recursive: true })
  const file = `${workDir}readme.ts`
  await writeFile(file, `import { readFileSync as __readFileSync } from 'node:fs'\n${instrument(code)}\nawait users.close()\nredis.disconnect()\nawait db.close()\n`)
  const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Claims }
  expect(__claims.length).toBe(13)
  for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
})
