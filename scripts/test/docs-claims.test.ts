import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

// What the READMEs say about the code, held to the code (issue 37 item 2: each of these was found
// stale by a first-hour user). The packages are read from their built dist, as users get them.

const root = fileURLToPath(new URL('../../', import.meta.url))
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const packages = readdirSync(join(root, 'packages'))

test('a package at its first release carries no upgrade notes: no "From 0.1", no "Changed in this release"', () => {
  for (const name of packages) {
    const version = (JSON.parse(read(`packages/${name}/package.json`)) as { version: string }).version
    const changelog = read(`packages/${name}/CHANGELOG.md`)
    const releases = [...changelog.matchAll(/^## (\S+)/gm)].map((match) => match[1])
    if (releases.length !== 1 || releases[0] !== version || !/First release/.test(changelog)) continue
    const readme = read(`packages/${name}/README.md`)
    expect(readme.match(/From 0\.1\b|[Cc]hanged in this release|\b0\.1 wrote|0\.1's/g), `packages/${name}/README.md`).toBeNull()
  }
})

test('the root README is for users: its set-up is the two commands (the benchmark, every test), the rest lives in CONTRIBUTING.md', () => {
  const readme = read('README.md')
  const setUp = /\n## Set-up\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  expect(setUp.split('\n').filter(Boolean).map((line) => line.split('#')[0].trim())).toEqual(['npm run bench', 'npm test'])
  expect(readme.match(/^#+ .*Contributing.*$/gm)).toBeNull()
  expect(readme).not.toContain('BLOOMKIT_FC_SEED')
  expect(readme).toContain('[CONTRIBUTING.md](CONTRIBUTING.md)')
  const contributing = read('CONTRIBUTING.md')
  for (const heading of ['## Set-up', '## Tests', '## The runtime matrix']) expect(contributing).toContain(`\n${heading}\n`)
  expect(contributing).toContain('BLOOMKIT_FC_SEED')
})

test('core README: a function it names under one entry point is exported from that entry, or the text says which', async () => {
  const entries: Record<string, Record<string, unknown>> = {
    '@bloomkit/core': await import('../../packages/core/dist/index.js'),
    '@bloomkit/core/store': await import('../../packages/core/dist/store/index.js'),
    '@bloomkit/core/spec': await import('../../packages/core/dist/spec.js'),
    '@bloomkit/core/testing': await import('../../packages/core/dist/testing/index.js'),
  }
  const exported = new Set(Object.values(entries).flatMap((entry) => Object.keys(entry)))
  const sections = read('packages/core/README.md').split(/^(?=##+ )/m)
  let checked = 0
  for (const section of sections) {
    const entry = /^### .*\(from `(@bloomkit\/core[^`]*)`\)/.exec(section)?.[1]
    if (entry === undefined) continue
    // `name(…)` optionally followed by "(from `@bloomkit/core/…`)", which names its own entry.
    for (const [, name, own] of section.matchAll(/`(\w+)\([^`]*\)`(?: \(from `(@bloomkit\/core[^`]*)`\))?/g)) {
      if (!exported.has(name)) continue // a method (hasher.hash(…)), not an export
      expect(Object.keys(entries[own ?? entry]), `${name}, named under ${entry}${own === undefined ? '' : ` as from ${own}`}`).toContain(name)
      checked++
    }
  }
  expect(checked).toBeGreaterThan(0)
})

test('level README: the exports it lists are the package’s', async () => {
  const level = await import('../../packages/level-backend/dist/index.js')
  const sentence = /The package exports ([\s\S]*?)\./.exec(read('packages/level-backend/README.md'))?.[1]
  expect(sentence).toBeDefined()
  const listed = [...sentence!.matchAll(/`(\w+)`/g)].map((match) => match[1]).sort()
  expect(listed).toEqual(Object.keys(level).sort())
})

test('redis README: "a billion IDs at 0.1 %" in as many shards as sizeRedisFilter makes', async () => {
  const { sizeRedisFilter } = await import('../../packages/redis-backend/dist/index.js')
  const readme = read('packages/redis-backend/README.md')
  const blocked = sizeRedisFilter({ capacity: 1e9, errorRate: 0.001 })
  const classic = sizeRedisFilter({ capacity: 1e9, errorRate: 0.001, layout: 'classic' })
  const gib = (bits: number) => (bits / 8 / 2 ** 30).toFixed(2)
  expect(readme).toContain(`A billion IDs at 0.1 % is ${gib(blocked.bits)} GiB in ${blocked.shards} shards (blocked layout; ${gib(classic.bits)} GiB in ${classic.shards} with \`layout: 'classic'\`)`)
  expect(readme).toContain(`a billion-key filter is ${blocked.shards} such steps`)
})

test('each package README’s install line installs every package its examples import (guard’s Usage imports PGlite)', () => {
  let checked = 0
  for (const name of packages) {
    const readme = read(`packages/${name}/README.md`)
    const install = /```sh\n(npm install (?!-g)[^\n]+)\n/.exec(readme)?.[1]
    if (install === undefined) continue
    const installed = new Set(install.split(/\s+/).slice(2))
    const imported = new Set<string>()
    for (const [, block] of readme.matchAll(/```ts\n([\s\S]*?)```/g)) {
      // A test file for the user's own test runner (core's "Test suite") is not the install's business.
      if (/from '(vitest|node:test)'/.test(block)) continue
      for (const [, from] of block.matchAll(/from '([^']+)'/g)) {
        if (from.startsWith('node:') || from.startsWith('.')) continue
        imported.add(from.split('/').slice(0, from.startsWith('@') ? 2 : 1).join('/'))
      }
    }
    // Or said where it is used: "(with `@bloomkit/memory-backend` installed too)".
    const saidToInstall = (dependency: string) => readme.split('\n').some((line) => line.includes(`\`${dependency}\``) && /install/.test(line))
    expect([...imported].filter((dependency) => !installed.has(dependency) && !saidToInstall(dependency)), `packages/${name}/README.md: ${install}`).toEqual([])
    checked++
  }
  expect(checked).toBeGreaterThanOrEqual(5)
})
