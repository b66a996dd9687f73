import { mkdir, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { instrument, tsBlocks, type Claims } from '../../../test-support/readme-snippets.js'

/** The README examples core and memory own (Redis and LevelDB ones run in their packages' tests). */
const READMES = ['../../../README.md', '../../core/README.md', '../README.md']
const workDir = fileURLToPath(new URL('../.readme-snippets/', import.meta.url))

function snippets(readme: string): string[] {
  return tsBlocks(new URL(readme, import.meta.url)).filter(
    (code) => /@bloomkit\/(core|memory-backend)'/.test(code) && !/level-backend|redis-backend|ioredis/.test(code),
  )
}

afterAll(() => rm(workDir, { recursive: true, force: true }))

describe.each(READMES.map((readme, index) => [readme, index] as const))('%s', (readme, index) => {
  const blocks = snippets(readme)
  test('has examples', () => expect(blocks.length).toBeGreaterThan(0))
  test.each(blocks.map((code, i) => [i + 1, code] as const))('example %i runs and every `// value` holds', async (i, code) => {
    await mkdir(workDir, { recursive: true })
    // One file per README and example: import() caches modules by path.
    const file = `${workDir}readme${index}_example${i}.ts`
    await writeFile(file, instrument(code))
    const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Claims }
    for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
  })
})
