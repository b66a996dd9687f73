import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { afterAll, expect, test } from 'vitest'

/**
 * What a browser app pays for core + the memory backend: an esbuild bundle (ESM, minified, chunks
 * split as apps ship them) of `MemoryBloomFilter`, gzipped. xxhash-wasm is loaded only where it is
 * used, so it must sit in a chunk of its own that a runtime without WebAssembly never fetches.
 *
 * The budget issue 16 asked for is 6 KB; the bundle is ~10.7 KB since layered filters (format 2,
 * reached from MemoryBloomFilter.create) joined it, so the test holds the line at BUDGET and fails
 * on any growth beyond it. Loading the layered code with import() does not help here: esbuild
 * assigns whole files to chunks by static reachability, and the package entry re-exports
 * LayeredMemoryFilter (whose createSync/importSync must stay synchronous), so the layered files land
 * in a chunk the main one imports. Without any layered code the rest is ~7.9 KB. The root README
 * states the measured size, and this test holds it to the measurement.
 *
 * Counting filters (issue 24) live in `@bloomkit/memory-backend/counting`, outside this bundle; what
 * they add here (~0.3 KB, 10,993 → 11,313 B) is the shared snapshot reader's version-3 checks and
 * the plain filter refusing to merge with a counting one. The budget moved by that much.
 *
 * Issue 25 moved it by ~0.7 KB more (11,313 → 12,005 B): XXH32's passes written out by hand
 * (helper calls TurboFan left uninlined made 16–64-char keys 2–4× slower), a word-at-a-time pass
 * for encoded keys and an inline UTF-8 encoder (~150 B of it). Then batched addMany/hasMany
 * (issue 25, item 3: a chunk's blocks loaded together, 12,005 → 12,375 B). Measured 9,661 B after
 * layered filters moved out of this bundle (issue 21); the budget was left for the lead to tighten.
 */
const BUDGET = 12 * 1024 + 256
/** How far the root README's stated sizes ("~9.6 KB gzip", "plus 2.1 KB of xxhash-wasm") may be from the measurement, in KB. */
const README_TOLERANCE = 0.2
const work = mkdtempSync(join(tmpdir(), 'bloomkit-size-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

test(`core + memory bundle: main chunks ≤ ${BUDGET} bytes gzip, xxhash-wasm split off`, async () => {
  const entry = join(work, 'entry.js')
  const memory = fileURLToPath(new URL('../../packages/memory-backend/dist/index.js', import.meta.url))
  writeFileSync(entry, `export { MemoryBloomFilter } from ${JSON.stringify(memory)}\n`)
  const out = join(work, 'out')
  const { metafile } = await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', splitting: true, platform: 'neutral', mainFields: ['module', 'main'], outdir: out, logLevel: 'error', metafile: true })
  const sizes = new Map(readdirSync(out).map((file) => [file, gzipSync(readFileSync(join(out, file)), { level: 9 }).length]))
  const wasm = [...sizes].filter(([file]) => file.startsWith('xxhash-wasm'))
  expect(wasm.length, 'xxhash-wasm in a chunk of its own').toBe(1)
  const main = [...sizes].filter(([file]) => !file.startsWith('xxhash-wasm')).reduce((sum, [, bytes]) => sum + bytes, 0)
  console.log(`core + memory: ${main} bytes gzip (xxhash-wasm, loaded where used: ${wasm[0][1]} bytes more)`)
  // What to look at when it grows: minified bytes per source file, before gzip.
  const inputs = Object.values(metafile.outputs).filter((output) => !output.entryPoint?.includes('xxhash-wasm')).flatMap((output) => Object.entries(output.inputs))
  console.log(inputs.filter(([, { bytesInOutput }]) => bytesInOutput > 0).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput).map(([file, { bytesInOutput }]) => `  ${bytesInOutput} ${file.replace(/^.*packages\//, '')}`).join('\n'))
  expect(main).toBeLessThanOrEqual(BUDGET)

  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const stated = readme.match(/~(\d+(?:\.\d+)?) KB\s+gzip[^.]*?plus (\d+(?:\.\d+)?) KB of xxhash-wasm/)
  expect(stated, 'the root README states the bundle size as "~X KB gzip … plus Y KB of xxhash-wasm"').not.toBeNull()
  expect(Math.abs(Number(stated![1]) - main / 1024), `README: ~${stated![1]} KB; measured ${(main / 1024).toFixed(2)} KB`).toBeLessThanOrEqual(README_TOLERANCE)
  expect(Math.abs(Number(stated![2]) - wasm[0][1] / 1024), `README: ${stated![2]} KB of xxhash-wasm; measured ${(wasm[0][1] / 1024).toFixed(2)} KB`).toBeLessThanOrEqual(README_TOLERANCE)
})
