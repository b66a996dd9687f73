import { execFile as execFileCallback } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Redis } from 'ioredis5'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startRedisServer, type RedisServerHandle } from '../../test-support/redis-servers.js'
import { instrument, tsBlocks } from '../../test-support/readme-snippets.js'

/**
 * A user's first install, for real: every package is packed with `pnpm pack` (which runs its
 * prepack build and rewrites `workspace:^`), and the tarballs are installed into a fresh app that
 * already has ioredis 5 (from the local pnpm store). The app compiles every README example
 * and a file using each package under strict TypeScript, with no cast (module resolution
 * `nodenext`, and `bundler` for the file), then runs the examples
 * (Redis ones against a throwaway server) and checks each `// value` they claim.
 */
const execFile = promisify(execFileCallback)
const root = fileURLToPath(new URL('../../', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
/** The ioredis 5 release the app starts with (the workspace's `ioredis5` alias keeps it in the store). */
const IOREDIS_5 = JSON.parse(readFileSync(join(root, 'node_modules/ioredis5/package.json'), 'utf8')).version as string
const NODE_TYPES = JSON.parse(readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8')).version as string
const READMES = ['README.md', ...readdirSync(join(root, 'packages')).map((name) => `packages/${name}/README.md`)]

const work = mkdtempSync(join(tmpdir(), 'bloomkit-pack-'))
const app = join(work, 'app')
let server: RedisServerHandle
let tarballs: Map<string, string>

interface PackageJson {
  name: string
  private?: boolean
  files?: string[]
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  [field: string]: unknown
}
const packageJson = (folder: string) => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as PackageJson
const publishable = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name))
  .filter((folder) => !packageJson(folder).private)

async function tarList(file: string): Promise<string[]> {
  return (await execFile('tar', ['tzf', file])).stdout.trim().split('\n')
}
/** Each tarball unpacked once, into a folder of its own: `tar xzOf` per member unzipped the whole tarball each time. */
const unpacked = new Map<string, Promise<string>>()
async function tarRead(file: string, member: string): Promise<string> {
  if (!unpacked.has(file)) {
    const folder = join(work, 'unpacked', String(unpacked.size))
    mkdirSync(folder, { recursive: true })
    unpacked.set(file, execFile('tar', ['xzf', file, '-C', folder]).then(() => folder))
  }
  return readFileSync(join(await unpacked.get(file)!, member), 'utf8')
}

beforeAll(async () => {
  const packs = join(work, 'packs')
  mkdirSync(packs)
  tarballs = new Map()
  // One after another: each prepack runs `tsc -b` over shared references.
  for (const folder of publishable) {
    const { stdout } = await execFile('pnpm', ['pack', '--pack-destination', packs], { cwd: folder })
    const file = stdout.trim().split('\n').filter((line) => line.endsWith('.tgz')).at(-1)!
    tarballs.set(packageJson(folder).name, file.startsWith('/') ? file : join(packs, file))
  }
  server = await startRedisServer()
})

afterAll(async () => {
  await server?.stop()
  rmSync(work, { recursive: true, force: true })
})

test('every package packs with its metadata, licence, readme and no workspace: ranges', async () => {
  expect(tarballs.size).toBe(publishable.length)
  for (const [name, file] of tarballs) {
    const files = await tarList(file)
    expect(files, name).toContain('package/LICENSE')
    expect(files, name).toContain('package/README.md')
    const manifest = JSON.parse(await tarRead(file, 'package/package.json')) as PackageJson
    expect(JSON.stringify(manifest), name).not.toContain('workspace:')
    for (const field of ['repository', 'homepage', 'bugs', 'keywords', 'engines', 'publishConfig']) expect(manifest[field], `${name} ${field}`).toBeDefined()
    expect(manifest.publishConfig, name).toEqual({ access: 'public' })
    if (name === '@bloomkit/core') expect(files).toContain('package/SPEC.md')
    // npm shows the README on its own: a relative link must land on a file the tarball holds
    // (links to the rest of the repository, such as docs/SPEC.md or benchmarks/RESULTS.md, are absolute).
    const readme = await tarRead(file, 'package/README.md')
    for (const [, target] of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z][a-z+.-]*:/i.test(target) || target.startsWith('#')) continue
      const path = new URL(target.split('#')[0], 'file:///package/README.md').pathname.slice(1)
      expect(files, `${name}: README links to ${target}`).toContain(path)
    }
  }
})

test('every source map and declaration map in a tarball points at a file in the same tarball', async () => {
  for (const [name, file] of tarballs) {
    const files = new Set(await tarList(file))
    const maps = [...files].filter((member) => member.endsWith('.map'))
    expect(maps.length, name).toBeGreaterThan(0)
    for (const map of maps) {
      const { sources } = JSON.parse(await tarRead(file, map)) as { sources: string[] }
      for (const source of sources) {
        const resolved = new URL(source, `file:///${map}`).pathname.slice(1)
        expect(files.has(resolved), `${name}: ${map} → ${source}`).toBe(true)
      }
    }
  }
})

test('a fresh app with ioredis 5 installs the tarballs, compiles the READMEs and a usage file under strict TypeScript, and runs the examples', async () => {
  mkdirSync(join(app, 'src'), { recursive: true })
  const dependencies: Record<string, string> = { ioredis: IOREDIS_5, '@types/node': NODE_TYPES, ...exampleDependencies() }
  for (const [name, file] of tarballs) dependencies[name] = `file:${file}`
  // Tarballs depend on each other by version; overrides point those ranges at the local files.
  const overrides = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]))
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies, pnpm: { overrides } }, null, 2))
  // From the local store; the registry only for metadata a machine has never fetched (a first run).
  await execFile('pnpm', ['install', '--prefer-offline', '--ignore-workspace', '--reporter=silent'], { cwd: app })
  expect(packageJson(join(app, 'node_modules/ioredis')).version).toBe(IOREDIS_5)
  // The cli's bin as the install links it: `bloomkit size` prints what the READMEs show, line for line.
  for (const readme of ['packages/cli/README.md', 'README.md']) {
    const sample = readFileSync(join(root, readme), 'utf8').match(/^\$ bloomkit (size .*)\n([\s\S]*?)\n\n/m)
    expect(sample, `${readme} shows a \`bloomkit size\` run`).not.toBeNull()
    const size = await execFile(join(app, 'node_modules', '.bin', 'bloomkit'), sample![1].split(' '))
    expect(size.stdout.trimEnd(), `bloomkit size from the tarball, as ${readme} shows it`).toBe(sample![2].trimEnd())
  }

  const examples: string[] = []
  /**
   * Compiled but not run (the packages' own tests run them): examples that need a Redis Cluster or
   * another service (a database), or a page's own server (the browser path's `fetch('/names.blmk')`,
   * which memory's readme-snippets test answers with the server example's bytes).
   */
  const compileOnly = new Set<string>()
  for (const readme of READMES) {
    for (const block of tsBlocks(join(root, readme))) {
      if (!/from '@bloomkit\//.test(block) || /from '(vitest|node:test)'/.test(block)) continue
      const name = `example${examples.length + 1}`
      const code = block
        .replaceAll(/\/\/ → /g, '// ')
        .replaceAll(/^(\s*);/gm, '$1')
        .replaceAll("{ host: 'localhost', port: 6379", `{ host: '${server.host}', port: ${server.port}`)
      writeFileSync(join(app, 'src', `${name}.ts`), `// ${readme}\n${instrument(code)}export {}\n`)
      examples.push(name)
      if (code.includes('new Cluster(') || code.includes("fetch('/") || Object.keys(exampleDependencies()).some((dependency) => code.includes(`from '${dependency}`))) compileOnly.add(name)
    }
  }
  expect(examples.length).toBeGreaterThanOrEqual(10)
  writeFileSync(join(app, 'src', 'usage.ts'), USAGE)
  writeFileSync(join(app, 'src', 'require.cts'), "const memory = require('@bloomkit/memory-backend') as typeof import('@bloomkit/memory-backend')\nconsole.log(typeof memory.MemoryBloomFilter)\n")
  const compilerOptions = {
    strict: true, target: 'ES2022', lib: ['ES2022', 'ESNext.Disposable'], module: 'nodenext', moduleResolution: 'nodenext',
    types: ['node'], rootDir: 'src', outDir: 'dist', skipLibCheck: true, noEmitOnError: true,
  }
  // Everything, as apps usually compile (skipLibCheck: other libraries' declarations, a database's
  // say, need their own lib settings) …
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }))
  const compiled = await execFile(process.execPath, [tsc, '-p', app]).catch((error: { stdout: string }) => error)
  expect(compiled.stdout, 'tsc').toBe('')
  // … and bloomkit's own declarations (with ioredis's) checked in full, without skipLibCheck, and
  // as strict code bases compile: with exactOptionalPropertyTypes, where ioredis's
  // `keyPrefix?: string` reads as `string | undefined`, which RedisClient must accept.
  writeFileSync(join(app, 'tsconfig.declarations.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, skipLibCheck: false, exactOptionalPropertyTypes: true, noEmit: true }, files: ['src/usage.ts'] }))
  const declarations = await execFile(process.execPath, [tsc, '-p', join(app, 'tsconfig.declarations.json')]).catch((error: { stdout: string }) => error)
  expect(declarations.stdout, 'tsc of the declarations').toBe('')
  // … and as a bundled app compiles (the README's other TypeScript setting): "moduleResolution": "bundler".
  writeFileSync(join(app, 'tsconfig.bundler.json'), JSON.stringify({ compilerOptions: { ...compilerOptions, module: 'esnext', moduleResolution: 'bundler', skipLibCheck: false, noEmit: true }, files: ['src/usage.ts'] }))
  const bundler = await execFile(process.execPath, [tsc, '-p', join(app, 'tsconfig.bundler.json')]).catch((error: { stdout: string }) => error)
  expect(bundler.stdout, 'tsc with moduleResolution bundler').toBe('')

  const cjs = await execFile(process.execPath, [join(app, 'dist', 'require.cjs')])
  expect(cjs.stdout.trim(), 'require() of the ESM package').toBe('function')

  const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, lazyConnect: true })
  try {
    for (const name of examples.filter((example) => !compileOnly.has(example))) {
      await redis.flushall()
      // A folder of its own per example: LevelDB examples create './data/…'.
      const cwd = join(work, 'runs', name)
      mkdirSync(cwd, { recursive: true })
      const { stdout } = await execFile(process.execPath, ['--input-type=module', '-e', RUNNER(join(app, 'dist', `${name}.js`))], { cwd, timeout: 30_000 })
      const claims = JSON.parse(stdout) as Array<[string, unknown, unknown]>
      for (const [expression, actual, claimed] of claims) expect(actual, `${name}: ${expression}`).toEqual(claimed)
    }
  } finally {
    redis.disconnect()
  }
})

/** Packages the README examples import besides bloomkit's and ioredis (a user's database, say), at the workspace's versions. */
function exampleDependencies(): Record<string, string> {
  const names = new Set<string>()
  for (const readme of READMES) {
    for (const block of tsBlocks(join(root, readme))) {
      for (const [, name] of block.matchAll(/from '((?:@[^/']+\/)?[^/'.][^/']*)/g)) {
        if (!name.startsWith('@bloomkit/') && !name.startsWith('node:') && name !== 'ioredis' && name !== 'vitest') names.add(name)
      }
    }
  }
  const versions: Record<string, string> = {}
  for (const name of names) {
    const where = ['', ...readdirSync(join(root, 'packages')).map((folder) => `packages/${folder}/`)]
      .map((prefix) => join(root, prefix, 'node_modules', name, 'package.json'))
      .find((file) => existsSync(file))
    if (where === undefined) throw new Error(`a README example imports ${name}, which no workspace package has installed`)
    versions[name] = (JSON.parse(readFileSync(where, 'utf8')) as { version: string }).version
  }
  return versions
}

/** Runs one compiled example and prints its claims as JSON (Uint8Arrays as arrays). */
const RUNNER = (file: string) => `
const { __claims } = await import(${JSON.stringify(file)})
console.log(JSON.stringify(__claims, (_, v) => (v instanceof Uint8Array ? [...v] : v)))
`

/** Each package used the way an app would, with ioredis 5's own clients: compiled, not run. */
const USAGE = `
import { Cluster, Redis } from 'ioredis'
import { BloomError, optimalParameters } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { RedisBloomFilter } from '@bloomkit/redis-backend'

export async function usage(): Promise<boolean[]> {
  const { bits, hashes }: { bits: number; hashes: number } = optimalParameters({ capacity: 1000, errorRate: 0.01 })
  const memory = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01 })
  const added: boolean = memory.add('a')
  const level = await LevelBloomFilter.create('./data/usage', { capacity: 1000, errorRate: 0.01 })
  await level.close()
  const redis = new Redis({ lazyConnect: true })
  const cluster = new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true })
  const viaRedis = await RedisBloomFilter.create(redis, 'a', { capacity: 1000, errorRate: 0.01 })
  const viaCluster = await RedisBloomFilter.open(cluster, 'a')
  try {
    return [added, bits > hashes, ...(await viaRedis.hasMany(['a'])), await viaCluster.has('a')]
  } catch (error) {
    if (error instanceof BloomError) console.error(error.code)
    throw error
  }
}
`
