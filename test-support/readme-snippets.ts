import { readFileSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * README examples run as tests, so the docs cannot drift from the code: the one runner, with one
 * notation. Each package's readme test picks the ```ts blocks it can run (Redis ones need a server,
 * LevelDB ones a folder) and every line `expression // value` becomes an assertion that the
 * expression (awaited) equals the value. A comment that is not a literal (`// true: ask the
 * server`) is read up to ' (' or ': '; one that is no literal at all is prose and checks nothing.
 */

/** The ```ts blocks of a Markdown file, in order. */
export function tsBlocks(path: URL | string): string[] {
  return [...readFileSync(path, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1])
}

/** The literal a `// …` comment claims, if it is one: the whole comment, or its part before ' (' or ': '. */
export function claimedValue(comment: string): string | undefined {
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

/** What an instrumented module exports: [expression, its value, the value the README claims]. */
export type Claims = Array<[string, unknown, unknown]>

/** A module that runs `code` and records each claimed value in its `__claims` export. */
export function instrument(code: string): string {
  const lines = code.split('\n').map((line) => {
    const match = line.match(/^(\s*)(.*\S)\s+\/\/\s+(.+)$/)
    if (!match || /^(import|const|let)\b/.test(match[2]) || /[,{(]$/.test(match[2])) return line
    const value = claimedValue(match[3])
    return value === undefined ? line : `${match[1]}__claims.push([${JSON.stringify(match[2])}, await (${match[2]}), ${value}])`
  })
  return `export const __claims: Array<[string, unknown, unknown]> = []\n${lines.join('\n')}\n`
}

/** The vitest functions {@link readmeSnippetTests} registers with. */
export interface SnippetRunner {
  describe: (name: string, body: () => void) => void
  test: (name: string, body: () => Promise<void> | void) => void
  expect: (actual: unknown, message?: string) => { toEqual: (expected: unknown) => void; toBeGreaterThan: (n: number) => void }
  afterAll: (body: () => Promise<void> | void) => void
}

/** Which examples of which READMEs a package runs, and how. */
export interface SnippetOptions {
  /** The READMEs, as URLs (e.g. `new URL('../README.md', import.meta.url)`). */
  readonly readmes: readonly URL[]
  /** Keeps the ```ts blocks this package can run (e.g. those importing it). */
  readonly select: (code: string) => boolean
  /** Adapts a block before it runs: a throwaway server's address, a temp folder. Default: as is. */
  readonly rewrite?: (code: string) => string
  /** Where the instrumented modules are written; removed after the tests. */
  readonly workDir: URL
}

/**
 * Registers one test per README example: the block runs as a module, and every line
 * `expression // value` asserts that the expression (awaited) equals the value. Each README given
 * must hold at least one selected example, so a README that loses its examples fails.
 */
export function readmeSnippetTests(runner: SnippetRunner, options: SnippetOptions): void {
  const { describe, test, expect, afterAll } = runner
  const dir = fileURLToPath(options.workDir)
  afterAll(() => rm(dir, { recursive: true, force: true }))
  options.readmes.forEach((readme, r) => {
    const blocks = tsBlocks(readme).filter(options.select)
    describe(fileURLToPath(readme), () => {
      test('has examples to run', () => expect(blocks.length).toBeGreaterThan(0))
      blocks.forEach((code, i) => {
        test(`example ${i + 1} runs and every \`// value\` holds`, async () => {
          await mkdir(dir, { recursive: true })
          // One file per README and example: import() caches modules by path.
          const file = join(dir, `readme${r}_example${i + 1}.ts`)
          await writeFile(file, instrument((options.rewrite ?? ((c) => c))(code)))
          const { __claims } = (await import(/* @vite-ignore */ file)) as { __claims: Claims }
          for (const [expression, actual, claimed] of __claims) expect(actual, expression).toEqual(claimed)
        })
      })
    })
  })
}
