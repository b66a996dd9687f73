import { readFileSync } from 'node:fs'

/**
 * README examples run as tests, so the docs cannot drift from the code. Each package's readme test
 * picks the ```ts blocks it can run (Redis ones need a server, LevelDB ones a folder) and turns
 * every line `expression // value` into an assertion that the expression equals the value.
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
