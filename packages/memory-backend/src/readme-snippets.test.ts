import { mkdir, rm, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, test } from 'vitest'

/**
 * README examples are run, and a line `expression // value` asserts that the expression equals the
 * value, so the docs cannot drift from the code. Redis and LevelDB examples are run by their
 * packages' own tests (they need servers and folders); these are the ones core and memory own.
 */
const READMES = ['../../../README.md', '../../core/README.md', '../README.md']
const workDir = fileURLToPath(new URL('../.readme-snippets/', import.meta.url))

function snippets(readme: string): string[] {
  const text = readFileSync(new URL(readme, import.meta.url), 'utf8')
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((match) => match[1])
    .filter((code) => /@bloomkit\/(core|memory-backend)'/.test(code) && !/level-backend|redis-backend|ioredis/.test(code))
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

function instrument(code: string): string {
  const lines = code.split('\n').map((line) => {
    const match = line.match(/^(\s*)([^/]*?\S)\s*\/\/\s*(.+)$/)
    if (!match || /^(import|const|let|await\s+\w+\.\w+\(\s*$)/.test(match[2])) return line
    const value = claimedValue(match[3])
    return value === undefined ? line : `${match[1]}__claims.push([${JSON.stringify(match[2])}, await (${match[2]}), ${value}])`
  })
  return `export const __claims: Array<[string, unknown, unknown]> = []\n${lines.join('\n')}\n`
}

afterAll(() => rm(workDir, { recursive: true, force: true }))

describe.each(READMES)('%s', (readme) => {
  const blocks = snippets(readme)
  test('has examples', () => expect(blocks.length).toBeGreaterThan(0))
  test.each(blocks.map((code, i) => [i + 1, code] as const))('example %i runs and every `// value` holds', async (i, code) => {
    await mkdir(workDir, { recursive: true })
    const file = `${workDir}${readme.replace(/\W+/g, '_')}_${i}.ts`
    await writeFile(file, instrument(code))
    const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Array<[string, unknown, unknown]> }
    for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
  })
})
