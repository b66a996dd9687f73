import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { expect, test } from 'vitest'

// What a user's plain `esbuild --bundle --minify --format=esm` of the README's memory quick start
// (create, add, has, export, import) puts in a page: one file, no code splitting, so xxhash-wasm's
// lazy import is inlined too. The fixed filter's entry must carry no layered code (issue 21).

const packages = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))

const quickStart = `import { MemoryBloomFilter } from '@bloomkit/memory-backend'
const filter = await MemoryBloomFilter.create({ capacity: 1_000_000, errorRate: 0.01 })
filter.add('user:42')
filter.has('user:42')
const copy = await MemoryBloomFilter.import(filter.export())
copy.has('user:42')
`

async function bundle(contents: string) {
  const result = await build({
    stdin: { contents, resolveDir: packages('memory-backend'), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    metafile: true,
    logLevel: 'silent',
    // The sources, as the published dist is built from them.
    alias: {
      '@bloomkit/memory-backend/layered': packages('memory-backend/src/layered.ts'),
      '@bloomkit/memory-backend': packages('memory-backend/src/index.ts'),
      '@bloomkit/core/store': packages('core/src/store.ts'),
      '@bloomkit/core': packages('core/src/index.ts'),
    },
  })
  const code = result.outputFiles[0].contents
  const inputs = Object.values(result.metafile.outputs)[0].inputs
  const bytesOf = (pattern: RegExp) => Object.entries(inputs).reduce((sum, [path, input]) => sum + (pattern.test(path) ? input.bytesInOutput : 0), 0)
  return { gzip: gzipSync(code, { level: 9 }).length, bytesOf }
}

test('the fixed filter’s plain bundle carries no layered code', async () => {
  const { gzip, bytesOf } = await bundle(quickStart)
  // Only isLayeredOptions (create's refusal of growth/window, ~110 bytes) comes from the layered modules.
  expect(bytesOf(/layered-filter|layer-storage|layered-snapshot|layered-batch|memory-layers|layered-memory-filter/)).toBe(0)
  expect(bytesOf(/layer-policy/)).toBeLessThan(200)
  // Measured 10,498 B gzip (13,239 B before layered filters left this entry); xxhash-wasm's inlined
  // module is 11.2 KB of it minified. A bound, so that layered code creeping back fails here.
  // Issue 25's hashing passes (2e3dc63, measured with this test after both landed: 11,592 B) and
  // batched addMany/hasMany (11,956 B) moved it.
  expect(gzip).toBeLessThan(12_300)
})

test('the layered entry bundles the layered filter (so the check above can fail)', async () => {
  const { bytesOf } = await bundle(`import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
const f = await LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 2 })
f.add('a')
`)
  expect(bytesOf(/layered-filter/)).toBeGreaterThan(1000)
})
