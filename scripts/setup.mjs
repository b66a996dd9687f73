#!/usr/bin/env node
// Gets a fresh machine (Node and npm only) ready: the pinned pnpm, the workspace's packages and
// Debian's redis-server (the Redis benchmark and tests start throwaway servers on loopback);
// with --for-tests also Debian's chromium, for the browser tests, and the Node runtimes the
// runtimes projects test on; with --for-bench every Node runtime of the benchmark's runtime table
// (both from the npm registry, into a cache shared by every clone: scripts/runtimes/runtimes.mjs).
// Every step is skipped when its result is already there, so this is cheap to run every time.
import { execSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fetchRuntime, RUNTIMES } from './runtimes/runtimes.mjs'

const forTests = process.argv.includes('--for-tests')
const forBench = process.argv.includes('--for-bench')
const { packageManager } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const pnpmVersion = packageManager.replace(/^pnpm@/, '')

function run(command) {
  console.log(`[setup] ${command}`)
  execSync(command, { stdio: 'inherit' })
}

function output(command) {
  try {
    return execSync(command, { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim()
  } catch {
    return ''
  }
}

if (output('pnpm --version') !== pnpmVersion) run(`npm install --global pnpm@${pnpmVersion}`)
run('pnpm install --frozen-lockfile --prefer-offline')

const missing = []
if (!output('command -v redis-server')) missing.push('redis-server')
if (forTests && !existsSync('/usr/bin/chromium')) missing.push('chromium')
if (missing.length > 0) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  const sudo = root ? '' : output('command -v sudo') ? 'sudo ' : undefined
  if (sudo === undefined || !output('command -v apt-get')) {
    console.error(`[setup] bloomkit needs ${missing.join(' and ')} (Debian packages); install them and run again`)
    process.exit(1)
  }
  run(`${sudo}apt-get update -qq`)
  run(`${sudo}env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing.join(' ')}`)
}

for (const runtime of RUNTIMES) if (forBench || (forTests && runtime.test)) fetchRuntime(runtime.version)
