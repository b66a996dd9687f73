import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const here = dirname(fileURLToPath(import.meta.url))
const packageRoot = join(here, '..', '..')
const coreRoot = join(packageRoot, '..', 'core')

function transpileTree(from: string, to: string, rewrite: (code: string) => string): void {
  mkdirSync(to, { recursive: true })
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    if (entry.isDirectory()) {
      transpileTree(source, join(to, entry.name), rewrite)
      continue
    }
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue
    const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    })
    writeFileSync(join(to, entry.name.replace(/\.ts$/, '.js')), rewrite(outputText))
  }
}

/**
 * The package and core, transpiled from their sources (not the possibly stale dist/) into a temp
 * folder that a plain `node` child process can import: `<root>/level/index.js`. `level` is
 * linked from the workspace. Call `remove()` when done.
 */
export function buildForChild(): { root: string; entry: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'bloomkit-child-'))
  const modules = join(root, 'node_modules')
  const coreOut = join(modules, '@bloomkit', 'core')
  transpileTree(join(coreRoot, 'src'), coreOut, (code) => code)
  writeFileSync(join(coreOut, 'package.json'), JSON.stringify({ name: '@bloomkit/core', type: 'module', exports: { '.': './index.js', './store': './store/index.js', './spec': './spec.js' } }))
  symlinkSync(join(packageRoot, 'node_modules', 'level'), join(modules, 'level'), 'dir')
  transpileTree(join(packageRoot, 'src'), join(root, 'level'), (code) => code)
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }))
  return { root, entry: join(root, 'level', 'index.js'), remove: () => rmSync(root, { recursive: true, force: true }) }
}

/**
 * Registers vitest hooks that build the package for child processes before the file's tests and
 * remove it after; returns the entry (index.js) to pass to runChild once the tests run.
 */
export function childBuildForTests(hooks: {
  beforeAll: (fn: () => void, timeout?: number) => void
  afterAll: (fn: () => void) => void
}): () => string {
  let build: ReturnType<typeof buildForChild> | undefined
  // Bundling for the child takes well under a second on a quiet machine, but over vitest's
  // default 10 s hook limit on a loaded CI runner; a timeout there is not what these tests test.
  hooks.beforeAll(() => {
    build = buildForChild()
  }, 120_000)
  hooks.afterAll(() => build?.remove())
  return () => build!.entry
}
