import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { chromium as chromiumType, type Browser } from 'playwright'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { wasmHashingSafe } from '@bloomkit/core/spec'
import { chromium } from '../../../vitest.shared.js'
import { bundleFingerprint, type Bundle } from './support/bundle.js'
import { fingerprint, violations, type Fingerprint } from './support/fingerprint.js'

// Where WebAssembly is unavailable, core's loadWasmHasher() resolves to undefined and every key,
// long ones included, takes the pure-JS XXH32. These tests run the same bundle of the memory
// backend there and compare with this process. On Node 22+ long keys here go through core's WebAssembly XXH32;
// on Node 20 core keeps WebAssembly off the hot path (see wasmHashingSafe), and the Chromium
// control page below is where WebAssembly answers are compared with this process's.

const run = promisify(execFile)

let bundle: Bundle
let host: Fingerprint
let dir: string

beforeAll(async () => {
  ;[bundle, host] = await Promise.all([bundleFingerprint(), fingerprint()])
  dir = await mkdtemp(join(tmpdir(), 'bloomkit-no-wasm-'))
  await writeFile(join(dir, 'fingerprint.js'), bundle.code)
}, 30_000)

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** The fingerprint minus where it ran: what must not depend on WebAssembly. */
const answers = ({ filters }: Fingerprint) => filters

test('this process hashes long keys with WebAssembly where the runtime allows it', () => {
  expect(host.usesWasm).toBe(wasmHashingSafe())
  expect(violations(host)).toEqual([])
})

test('the memory backend + core bundle is self-contained and uses no Node built-in', () => {
  expect(bundle.imports).toEqual([])
  // Vite replaces a Node built-in in a browser build by a stand-in module with this id.
  expect(bundle.moduleIds.filter((id) => /browser-external|^node:/.test(id))).toEqual([])
  expect(bundle.moduleIds.some((id) => id.endsWith('memory-bit-store.ts'))).toBe(true)
  expect(bundle.moduleIds.some((id) => id.endsWith('xxhash32-wasm.ts'))).toBe(true)
  expect(bundle.moduleIds.some((id) => id.endsWith('reader.ts'))).toBe(true)
})

test('node --jitless (no WebAssembly): pure-JS hashing, answers and snapshot identical', async () => {
  const script = `import { fingerprint } from './fingerprint.js'
console.log(JSON.stringify({ webAssembly: typeof WebAssembly, fingerprint: await fingerprint() }))`
  const { stdout } = await run(process.execPath, ['--jitless', '--input-type=module', '-e', script], { cwd: dir, timeout: 30_000, maxBuffer: 64 << 20 })
  const child = JSON.parse(stdout) as { webAssembly: string; fingerprint: Fingerprint }
  expect(child.webAssembly).toBe('undefined')
  expect(child.fingerprint.usesWasm).toBe(false)
  expect(answers(child.fingerprint)).toEqual(answers(host))
}, 30_000)

describe('Chromium page whose Content-Security-Policy lacks wasm-unsafe-eval', () => {
  const policies: Record<string, string> = {
    strict: "default-src 'self'",
    // The control: the same page allowed to compile WebAssembly.
    wasm: "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'",
  }
  const main = `import { fingerprint } from './fingerprint.js'
let wasmError = null
try { await WebAssembly.compile(Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0)) } catch (error) { wasmError = String(error) }
window.report({ wasmError, fingerprint: await fingerprint() })`
  let server: Server
  let origin: string
  let browser: Browser

  beforeAll(async () => {
    server = createServer((request, response) => {
      const [, policy, file] = /^\/(\w+)\/(.*)$/.exec(request.url ?? '') ?? []
      const body = file === '' ? '<!doctype html><script type="module" src="main.js"></script>' : file === 'main.js' ? main : file === 'fingerprint.js' ? bundle.code : undefined
      if (policies[policy] === undefined || body === undefined) {
        response.writeHead(404).end()
        return
      }
      response.writeHead(200, {
        'content-type': file === '' ? 'text/html' : 'text/javascript',
        'content-security-policy': policies[policy],
      })
      response.end(body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    browser = await chromiumType.launch({ executablePath: chromium.executablePath, args: chromium.args, headless: true })
  }, 30_000)

  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => server?.close(resolve))
  })

  async function visit(policy: string): Promise<{ wasmError: string | null; fingerprint: Fingerprint }> {
    const page = await browser.newPage()
    try {
      return await new Promise((resolve, reject) => {
        page.on('pageerror', reject)
        page.on('requestfailed', (request) => reject(new Error(`${request.url()} failed`)))
        void page.exposeFunction('report', resolve).then(() => page.goto(`${origin}/${policy}/`), reject)
      })
    } finally {
      await page.close()
    }
  }

  test('the filter falls back to pure JS and answers exactly as Node with WebAssembly; the snapshot reader answers as the filter', async () => {
    const { wasmError, fingerprint } = await visit('strict')
    expect(wasmError).toMatch(/CompileError.*unsafe-eval/)
    expect(fingerprint.usesWasm).toBe(false)
    // The reader (issue 37) needs no WebAssembly: under this policy too it answers every key as the filter.
    expect(violations(fingerprint)).toEqual([])
    expect(answers(fingerprint)).toEqual(answers(host))
  }, 30_000)

  test('control: with wasm-unsafe-eval the same page uses WebAssembly, with the same answers', async () => {
    const { wasmError, fingerprint } = await visit('wasm')
    expect(wasmError).toBeNull()
    expect(fingerprint.usesWasm).toBe(true)
    expect(answers(fingerprint)).toEqual(answers(host))
  }, 30_000)
})
