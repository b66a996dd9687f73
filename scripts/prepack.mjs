#!/usr/bin/env node
// Runs as each package's `prepack` (pnpm pack / pnpm publish, from the package's folder): builds
// the package and what it references, so a tarball never ships a stale or missing dist/, and
// copies the repository's docs/SPEC.md into @bloomkit/core, whose README and types cite it.
import { execFileSync } from 'node:child_process'
import { copyFileSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const { name } = JSON.parse(readFileSync('package.json', 'utf8'))
const tsc = createRequire(new URL('../package.json', import.meta.url)).resolve('typescript/bin/tsc')
execFileSync(process.execPath, [tsc, '-b', '.'], { stdio: 'inherit' })
if (name === '@bloomkit/core') copyFileSync(new URL('../docs/SPEC.md', import.meta.url), 'SPEC.md')
