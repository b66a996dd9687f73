import { mkdir, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { tempFolders } from './support/temp-folders.js'
import { instrument, tsBlocks, type Claims } from '../../../test-support/readme-snippets.js'

/** The README's LevelDB examples, and the root README's, with './data/…' folders moved into temp folders. */
const READMES = ['../README.md', '../../../README.md']
const workDir = fileURLToPath(new URL('../.readme-snippets/', import.meta.url))
const folders = tempFolders()

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true })
  folders.removeAll()
})

function snippets(readme: string): string[] {
  const url = new URL(readme, import.meta.url)
  if (!existsSync(url)) return []
  return tsBlocks(url).filter((code) => code.includes("'@bloomkit/level-backend'"))
}

test('the package README has LevelDB examples', () => {
  expect(snippets(READMES[0]).length).toBeGreaterThanOrEqual(3)
})

describe.each(READMES)('%s', (readme) => {
  const blocks = snippets(readme)
  test.skipIf(blocks.length === 0).each(blocks.map((code, i) => [i + 1, code] as const))('example %i runs and every `// value` holds', async (i, code) => {
    await mkdir(workDir, { recursive: true })
    const file = `${workDir}readme${READMES.indexOf(readme)}_example${i}.ts`
    await writeFile(file, instrument(code.replaceAll("'./data/", `'${folders.make()}/`)))
    const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Claims }
    if (readme === READMES[0]) expect(__claims.length).toBeGreaterThan(0)
    for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
  })
})
