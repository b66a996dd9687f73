import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

// No source file in any package's src/ is over 400 lines (issue 34's done-when): a module that
// grows past that is doing more than one job, and is split by concern rather than read whole.

const root = fileURLToPath(new URL('../../', import.meta.url))
const MAX_LINES = 400

/** Every .ts file below `folder`, as paths. */
function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

test(`no file in packages/*/src is over ${MAX_LINES} lines`, () => {
  const packages = join(root, 'packages')
  const files = readdirSync(packages).flatMap((name) => sources(join(packages, name, 'src')))
  expect(files.length).toBeGreaterThan(100)
  const over = files
    .map((path) => ({ file: relative(root, path), lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES)
  expect(over).toEqual([])
})
