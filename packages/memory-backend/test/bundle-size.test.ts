import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { expect, test } from 'vitest'

// What a user's plain `esbuild --bundle --minify --format=esm` of the README's memory quick start
// (create, add, has, export, import) puts in a page: one file, no code splitting. The fixed filter's
// entry must carry no layered code, and its WebAssembly is core's own 786-byte XXH32 (issue 21).

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
      '@bloomkit/memory-backend/reader': packages('memory-backend/src/reader.ts'),
      '@bloomkit/memory-backend/layered': packages('memory-backend/src/layered.ts'),
      '@bloomkit/memory-backend': packages('memory-backend/src/index.ts'),
      '@bloomkit/core/store': packages('core/src/store/index.ts'),
      '@bloomkit/core': packages('core/src/index.ts'),
    },
  })
  const code = result.outputFiles[0].contents
  const inputs = Object.values(result.metafile.outputs)[0].inputs
  const bytesOf = (pattern: RegExp) => Object.entries(inputs).reduce((sum, [path, input]) => sum + (pattern.test(path) ? input.bytesInOutput : 0), 0)
  return { gzip: gzipSync(code, { level: 9 }).length, bytesOf, inputs: Object.keys(inputs).filter((path) => inputs[path].bytesInOutput > 0) }
}

test('the fixed filter’s plain bundle carries no layered code', async () => {
  const { gzip, bytesOf } = await bundle(quickStart)
  // Only isLayeredOptions (create's refusal of growth/window, ~110 bytes) comes from the layered modules.
  expect(bytesOf(/layered-filter|layer-storage|layered-snapshot|layered-batch|memory-layers|layered-memory-filter/)).toBe(0)
  expect(bytesOf(/layer-policy/)).toBeLessThan(200)
  // Core's own WebAssembly XXH32 (xxhash32.wat, ~0.9 KB base64 minified), not the xxhash-wasm
  // package, which a bundle without splitting inlined whole (11.2 KB minified, ~2.2 KB gzip).
  expect(bytesOf(/xxhash-wasm/)).toBe(0)
  // Measured 10,821 B gzip (12,229 B with xxhash-wasm; 13,239 B before layered filters left this
  // entry). A bound, so that layered code creeping back fails here; what the rest is made of, and
  // what 6 KB would take, is in benchmarks/README.md ("Bundle size").
  // Honest sizing (issue 20: sizeFilter's exact rate of small shards and blocks) added ~0.47 KB:
  // 11,289 B measured. Refusing unknown option names with a did-you-mean suggestion (issue 23: core's
  // option-names.ts, 982 B minified) moved it to 11,757 B. Shorter messages (the same codes, parameters
  // and ranges; no message says a thing twice): 11,656 B; a blocked filter's errorRate() without
  // estimateErrorRate's checks of its own parameters: 11,559 B (11,614 B when issue 25 began on it).
  // hasMany's batch with an unrolled first pass and two probe chains (issue 25): 11,715 B.
  // Checking every option's type and range at the entry, null and inherited options included, one
  // check per option name (issue 33 items 13, 14, 17: option-values.ts, ~1 KB minified), and refusing
  // detached Uint8Array keys: 12,423 B.
  // 12,526 B when issue 36 began on it. Batches hashed in one pass (issue 36 item 3: KeyHasher.hashMany,
  // and the .wat's `many` export, 684 → 786 bytes of WebAssembly): 12,948 B.
  // Arrays hashed a run of 1024 at a time by the default addMany/hasMany (6d20c4f) and seedNote's
  // { seeded } option (issue 37 item 2): 13,246 B. The bound is the measurement + ~2 %.
  expect(gzip).toBeLessThan(13_500)
})

test('the layered entry bundles the layered filter (so the check above can fail)', async () => {
  const { bytesOf } = await bundle(`import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
const f = await LayeredMemoryFilter.create({ capacity: 10, errorRate: 0.01, growth: 2 })
f.add('a')
`)
  expect(bytesOf(/layered-filter/)).toBeGreaterThan(1000)
})

// The reader (issue 37): a page that only checks keys against a snapshot the server built. The page
// as a user writes it: fetch the bytes, open them, ask.
const readerPage = (entry: string) => `import { ${entry} } from '@bloomkit/memory-backend/reader'
const response = await fetch('/names.blmk')
const names = ${entry}(new Uint8Array(await response.arrayBuffer()))
names.has('carol')
`

test('a page that reads a fixed snapshot and calls has: at most 2 KB gzip', async () => {
  const { gzip, inputs } = await bundle(readerPage('openSnapshot'))
  console.log(`reader page: ${gzip} B gzip`)
  // Nothing of core but BloomError's class: the reader has its own XXH32, CRC-32 and positions.
  expect(inputs.filter((path) => path.includes('core/')).map((path) => path.replace(/^.*core\//, ''))).toEqual(['src/errors.ts'])
  expect(inputs.filter((path) => /reader\/layered/.test(path))).toEqual([])
  // Measured 1,977 B (the peers that read a Bloom filter in a page: @duckduckgo/jsbloom 1.02 KB,
  // bloomfilter 1.47 KB, bitpay's bloom-filter 1.52 KB, binary-fuse-filter 2.3 KB gzip).
  expect(gzip).toBeLessThanOrEqual(2048)
})

test('the layered reader (openLayeredSnapshot, fixed and layered snapshots): ~2.6 KB gzip', async () => {
  const { gzip } = await bundle(readerPage('openLayeredSnapshot'))
  console.log(`layered reader page: ${gzip} B gzip`)
  // Measured 2,594 B: the layered part adds ~0.6 KB, a third of the fixed reader, so it is read
  // rather than refused, from a function of its own that a fixed page does not bundle.
  expect(gzip).toBeLessThanOrEqual(2_650)
})
