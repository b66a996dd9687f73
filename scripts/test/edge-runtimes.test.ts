import { execFile as execFileCallback, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { chromium as playwrightChromium } from 'playwright'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { chromium } from '../../vitest.shared.js'
import { freePort } from '../../test-support/redis-servers.js'

/**
 * One esbuild bundle of core + the memory backend (what a user ships to an edge runtime), run in
 * every runtime bloomkit names under "Requirements": Node, Deno, Bun, workerd (Cloudflare
 * Workers' runtime, which forbids compiling WebAssembly at run time), Vercel's edge-runtime and
 * headless Chromium. Each builds the same filter from the same keys and must answer with the same
 * snapshot bytes, and the snapshot reader (issue 37) must answer every key as the filter does. The
 * runtimes come from npm (the workspace's devDependencies), nothing else.
 */
const execFile = promisify(execFileCallback)
const require = createRequire(import.meta.url)
const root = fileURLToPath(new URL('../../', import.meta.url))
const bin = (name: string) => join(root, 'node_modules', '.bin', name)
const work = mkdtempSync(join(tmpdir(), 'bloomkit-edge-'))
const bundleFile = join(work, 'bundle.js')
let bundle: string

interface Answer {
  snapshot: string
  present: number
  falsePositives: number
  added: number
  /** Whether the runtime hashes long keys with WebAssembly (core's xxhash32.wat). */
  wasm: boolean
  /** Keys the snapshot reader (`@bloomkit/memory-backend/reader`) answered otherwise than the filter. */
  readerDisagrees: number
}
const answers = new Map<string, Answer>()

beforeAll(async () => {
  // An IIFE (a classic script) runs everywhere: as a module in Node, Deno and Bun, as a script in
  // edge-runtime's context, a Worker's service-worker script, and a page's <script>.
  await build({
    entryPoints: [fileURLToPath(new URL('./edge/entry.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    outfile: bundleFile,
    logLevel: 'error',
  })
  bundle = readFileSync(bundleFile, 'utf8')
})

afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A script for Node, Deno and Bun: runs the bundle and prints the answer. */
const moduleRunner = () => {
  const file = join(work, 'runner.mjs')
  writeFileSync(file, `await import(${JSON.stringify(pathToFileURL(bundleFile).href)})\nconsole.log(JSON.stringify(await globalThis.bloomkitEdge.run()))\n`)
  return file
}

async function record(runtime: string, stdout: string): Promise<void> {
  const answer = JSON.parse(stdout.trim().split('\n').at(-1)!) as Answer
  answers.set(runtime, answer)
  expect(answer.present, `${runtime}: every added key is found`).toBe(2600)
  expect(answer.readerDisagrees, `${runtime}: the snapshot reader answers as the filter`).toBe(0)
}

test('Node', async () => {
  const { stdout } = await execFile(process.execPath, [moduleRunner()])
  await record('node', stdout)
})

test('Deno', async () => {
  const env = { ...process.env, DENO_DIR: join(work, 'deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }
  const { stdout } = await execFile(bin('deno'), ['run', '--no-prompt', '--no-config', moduleRunner()], { env })
  await record('deno', stdout)
})

test('Bun', async () => {
  const { stdout } = await execFile(bin('bun'), [moduleRunner()], { env: { ...process.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' } })
  await record('bun', stdout)
})

test("Vercel's edge-runtime", async () => {
  const runner = join(work, 'edge-runtime.mjs')
  writeFileSync(runner, `
import { EdgeRuntime } from ${JSON.stringify(pathToFileURL(require.resolve('edge-runtime')).href)}
import { readFileSync } from 'node:fs'
const runtime = new EdgeRuntime({ initialCode: readFileSync(${JSON.stringify(bundleFile)}, 'utf8') })
if (runtime.evaluate('typeof process') !== 'undefined') throw new Error('edge-runtime has a process global')
console.log(await runtime.evaluate('globalThis.bloomkitEdge.run().then(JSON.stringify)'))
`)
  const { stdout } = await execFile(process.execPath, [runner])
  await record('edge-runtime', stdout)
})

test('workerd (Cloudflare Workers)', async () => {
  const port = await freePort()
  writeFileSync(join(work, 'worker.js'), `${bundle}
addEventListener('fetch', (event) => event.respondWith(globalThis.bloomkitEdge.run().then(
  (answer) => new Response(JSON.stringify(answer)),
  (error) => new Response(String(error && error.stack), { status: 500 }),
)))
`)
  writeFileSync(join(work, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  serviceWorkerScript = embed "worker.js",
  compatibilityDate = "2025-06-01",
);
`)
  // node_modules/.bin/workerd is a Node launcher that starts the native server as its own child and
  // does not pass signals on, so the server runs in a process group of its own and the whole group is
  // stopped (killing the launcher alone left the server running after the test run).
  const child = spawn(bin('workerd'), ['serve', join(work, 'config.capnp')], { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  try {
    const response = await fetchWhenUp(`http://127.0.0.1:${port}/`, () => stderr)
    const body = await response.text()
    expect(response.status, body).toBe(200)
    await record('workerd', body)
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      process.kill(-child.pid!, 'SIGTERM')
      await exited
    }
    // The launcher's exit does not mean the server's: it may still be draining (it answered once, a
    // moment after). Wait until no process of the group is left.
    await groupGone(child.pid!)
  }
  // Nothing of the server is left answering on its port.
  await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow()
})

test('headless Chromium', async () => {
  const browser = await playwrightChromium.launch({ executablePath: chromium.executablePath, args: chromium.args })
  try {
    const page = await browser.newPage()
    await page.addScriptTag({ content: bundle })
    const answer = await page.evaluate(() => (globalThis as unknown as { bloomkitEdge: { run(): Promise<unknown> } }).bloomkitEdge.run())
    await record('chromium', JSON.stringify(answer))
  } finally {
    await browser.close()
  }
})

test('every runtime answers with the same snapshot bytes', () => {
  expect([...answers.keys()].sort()).toEqual(['bun', 'chromium', 'deno', 'edge-runtime', 'node', 'workerd'])
  const { wasm: _, ...node } = answers.get('node')!
  for (const [runtime, { wasm: __, ...answer }] of answers) expect(answer, runtime).toEqual(node)
})

test('the pure-JS pass serves every key where WebAssembly loses or is refused (edge-runtime, workerd)', () => {
  expect(answers.get('edge-runtime')?.wasm).toBe(false)
  expect(answers.get('workerd')?.wasm).toBe(false)
  expect(answers.get('chromium')?.wasm, 'browsers keep WebAssembly for long keys').toBe(true)
})

/** Resolves once no process of group `pgid` is left: SIGTERM's grace is 10 s, then SIGKILL. */
async function groupGone(pgid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0)
      return true
    } catch {
      return false
    }
  }
  const deadline = Date.now() + 10_000
  while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  if (alive()) process.kill(-pgid, 'SIGKILL')
  while (alive()) await new Promise((resolve) => setTimeout(resolve, 50))
}

/** Polls until workerd accepts connections (it prints nothing when ready), then fetches once. */
async function fetchWhenUp(url: string, log: () => string): Promise<Response> {
  const deadline = Date.now() + 20_000
  for (;;) {
    try {
      return await fetch(url)
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`workerd did not answer: ${log()}`, { cause: error })
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}
