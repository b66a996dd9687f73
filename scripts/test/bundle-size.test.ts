import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { afterAll, expect, test } from 'vitest'

/**
 * What a browser app pays for core + the memory backend: an esbuild bundle (ESM, minified, chunks
 * split as apps ship them) of `MemoryBloomFilter`, gzipped. Its WebAssembly (core's own XXH32,
 * 786 bytes, base64 in the bundle) is part of it: there is no chunk to load later.
 *
 * The budget issue 16 asked for is 6 KB. History: ~10.7 KB once layered filters joined this
 * entry, 11,313 B with counting's shared snapshot checks (issue 24), 12,375 B with issue 25's
 * written-out XXH32 passes and batched addMany/hasMany; 9,661 B + 2.1 KB of xxhash-wasm in a chunk
 * of its own after layered filters left the entry (issue 21). Issue 21 item 3 replaced xxhash-wasm
 * (11.2 KB minified inlined, two passes per key) by xxhash32.wat; the figures per module are in
 * benchmarks/README.md ("Bundle size"). The root README states the measured size, and this test
 * holds it to the measurement. Honest sizing (issue 20: sizeFilter's exact rate of small shards and
 * blocks, E[(set bits / bits)^k]) added ~0.46 KB: 11,232 B. Refusing unknown option names with a
 * did-you-mean suggestion (issue 23, core's option-names.ts, ~0.5 KB gzip) brought it to 11,708 B;
 * shorter messages (same codes, parameters and ranges), 11,599 B; errorRate() without re-checking the
 * filter's own parameters, 11,507 B. Checking every option's type and range at the entry, null and
 * inherited options included, and refusing detached Uint8Array keys (issue 33 items 13, 14, 17:
 * option-values.ts and the table of checks in option-names.ts, ~2 KB minified): 12,495 B. Batches
 * hashed in one pass (issue 36 item 3: KeyHasher.hashMany, the .wat's `many` export, 684 → 786
 * bytes, and the default addMany/hasMany hashing an array a run at a time): 13,091 B. The budget
 * is that + ~2 %.
 */
const BUDGET = 13_350
/** How far the root README's stated size ("~X KB gzip") may be from the measurement, in KB. */
const README_TOLERANCE = 0.2
const work = mkdtempSync(join(tmpdir(), 'bloomkit-size-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

test(`core + memory bundle: ≤ ${BUDGET} bytes gzip, WebAssembly included`, async () => {
  const entry = join(work, 'entry.js')
  const memory = fileURLToPath(new URL('../../packages/memory-backend/dist/index.js', import.meta.url))
  writeFileSync(entry, `export { MemoryBloomFilter } from ${JSON.stringify(memory)}\n`)
  const out = join(work, 'out')
  const { metafile } = await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', splitting: true, platform: 'neutral', mainFields: ['module', 'main'], outdir: out, logLevel: 'error', metafile: true })
  const sizes = new Map(readdirSync(out).map((file) => [file, gzipSync(readFileSync(join(out, file)), { level: 9 }).length]))
  const total = [...sizes.values()].reduce((sum, bytes) => sum + bytes, 0)
  console.log(`core + memory: ${total} bytes gzip in ${sizes.size} file(s)`)
  // What to look at when it grows: minified bytes per source file, before gzip.
  const inputs = Object.values(metafile.outputs).flatMap((output) => Object.entries(output.inputs))
  console.log(inputs.filter(([, { bytesInOutput }]) => bytesInOutput > 0).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput).map(([file, { bytesInOutput }]) => `  ${bytesInOutput} ${file.replace(/^.*packages\//, '')}`).join('\n'))
  expect(inputs.filter(([file]) => file.includes('xxhash-wasm')), 'no xxhash-wasm: core has its own WebAssembly XXH32').toEqual([])
  expect(total).toBeLessThanOrEqual(BUDGET)

  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const stated = readme.match(/~(\d+(?:\.\d+)?) KB\s+gzip/)
  expect(stated, 'the root README states the bundle size as "~X KB gzip"').not.toBeNull()
  expect(Math.abs(Number(stated![1]) - total / 1024), `README: ~${stated![1]} KB; measured ${(total / 1024).toFixed(2)} KB`).toBeLessThanOrEqual(README_TOLERANCE)
})
