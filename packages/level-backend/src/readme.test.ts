import { mkdir, rm, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'
import { tempFolders } from '../test/temp-folders.js'

/**
 * The README's ```ts examples run, with './data/…' folders moved into a temp folder; a line
 * `expression // value` asserts that the expression equals the value. The root README's LevelDB
 * examples run here too.
 */
const READMES = ['../README.md', '../../../README.md']
const workDir = fileURLToPath(new URL('../.readme-snippets/', import.meta.url))
const folders = tempFolders()

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true })
  folders.removeAll()
})

function snippets(readme: string): string[] {
  let text: string
  try {
    text = readFileSync(new URL(readme, import.meta.url), 'utf8')
  } catch {
    return []
  }
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]).filter((code) => code.includes("'@bloomkit/level-backend'"))
}

/** The literal a `// …` comment claims, if it is one: the whole comment, or its part before ' (' or ': '. */
function claimedValue(comment: string): string | undefined {
  for (const candidate of [comment, comment.split(' (')[0], comment.split(/:\s/)[0]]) {
    try {
      new Function(`return (${candidate})`)()
      return candidate
    } catch {
      // not a literal; try the next reading
    }
  }
  return undefined
}

function instrument(code: string, dataDir: string): string {
  const lines = code.replaceAll("'./data/", `'${dataDir}/`).split('\n').map((line) => {
    const match = line.match(/^(\s*)(.*\S)\s+\/\/\s+(.+)$/)
    if (!match || /^(import|const|let)\b/.test(match[2]) || /[,{(]$/.test(match[2])) return line
    const value = claimedValue(match[3])
    return value === undefined ? line : `${match[1]}__claims.push([${JSON.stringify(match[2])}, await (${match[2]}), ${value}])`
  })
  return `export const __claims: Array<[string, unknown, unknown]> = []\n${lines.join('\n')}\n`
}

test('the package README has LevelDB examples', () => {
  expect(snippets(READMES[0]).length).toBeGreaterThanOrEqual(3)
})

describe.each(READMES)('%s', (readme) => {
  const blocks = snippets(readme)
  test.skipIf(blocks.length === 0).each(blocks.map((code, i) => [i + 1, code] as const))('example %i runs and every `// value` holds', async (i, code) => {
    await mkdir(workDir, { recursive: true })
    const file = `${workDir}readme${READMES.indexOf(readme)}_example${i}.ts`
    await writeFile(file, instrument(code, folders.make()))
    const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Array<[string, unknown, unknown]> }
    if (readme === READMES[0]) expect(__claims.length).toBeGreaterThan(0)
    for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
  })
})
