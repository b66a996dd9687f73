#!/usr/bin/env node
// Runs as each package's `prepack` (pnpm pack / pnpm publish, from the package's folder): builds
// the package and what it references, so a tarball never ships a stale or missing dist/; removes
// outputs whose source is gone (a moved or deleted module), which `tsc -b` leaves behind; and
// copies the repository's docs/SPEC.md into @bloomkit/core, whose README and types cite it.
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

const { name } = JSON.parse(readFileSync('package.json', 'utf8'))
const tsc = createRequire(new URL('../package.json', import.meta.url)).resolve('typescript/bin/tsc')
execFileSync(process.execPath, [tsc, '-b', '.'], { stdio: 'inherit' })
removeOrphans('dist', 'src')
if (name === '@bloomkit/core') copyFileSync(new URL('../docs/SPEC.md', import.meta.url), 'SPEC.md')

/** Deletes each dist/x.js, .d.ts and their maps whose src/x.ts no longer exists. */
function removeOrphans(out, source) {
  for (const entry of readdirSync(out, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const file = join(entry.parentPath, entry.name)
    const stem = file.slice(out.length + 1).replace(/(\.d)?\.[cm]?js(\.map)?$|\.d\.[cm]?ts(\.map)?$/, '')
    if (stem === file.slice(out.length + 1)) continue
    if (!['.ts', '.mts', '.cts', '.tsx'].some((extension) => existsSync(join(source, stem + extension)))) rmSync(file)
  }
}
