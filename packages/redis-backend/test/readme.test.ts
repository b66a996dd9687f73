import { mkdir, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, inject, test } from 'vitest'
import { instrument, tsBlocks, type Claims } from '../../../test-support/readme-snippets.js'

/** The Redis examples: this package's README, and the root README's Redis quick start. */
const READMES = ['../README.md', '../../../README.md']
const workDir = fileURLToPath(new URL('./.readme-snippets/', import.meta.url))

afterAll(() => rm(workDir, { recursive: true, force: true }))

/** The README's addresses become the throwaway servers'. */
function onTestServers(code: string): string {
  const { host, port } = inject('redisStandalone')
  const node = inject('redisCluster')[0]
  return code
    .replace(/\{ host: 'localhost', port: 6379/g, `{ host: '${host}', port: ${port}`)
    .replace(/\[\{ host: 'localhost', port: 7000 \}\]/g, JSON.stringify([node]))
}

describe.each(READMES.map((readme, index) => [readme, index] as const))('%s', (readme, index) => {
  const blocks = tsBlocks(new URL(readme, import.meta.url)).filter((code) => code.includes('@bloomkit/redis-backend'))
  test('has Redis examples, each with checked results', () => {
    expect(blocks.length).toBeGreaterThan(0)
    for (const code of blocks) expect(instrument(code)).toMatch(/__claims\.push/)
  })
  test.each(blocks.map((code, i) => [i + 1, code] as const))('example %i runs and every `// value` holds', async (i, code) => {
    await mkdir(workDir, { recursive: true })
    // One file per README and example: import() caches modules by path.
    const file = `${workDir}readme${index}_example${i}.ts`
    await writeFile(file, instrument(onTestServers(code)))
    const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Claims }
    expect(__claims.length).toBeGreaterThan(0)
    for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
  })
})
