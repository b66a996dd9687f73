// The code a user ships to an edge runtime: core + the memory backend, bundled by esbuild.
// Every runtime runs the same bundle and must answer with the same bytes.
import { MemoryBloomFilter } from '../../../packages/memory-backend/dist/index.js'
import { openSnapshot } from '../../../packages/memory-backend/dist/reader.js'
import { wasmHashingSafe } from '../../../packages/core/dist/spec.js'

/** Keys of every kind the hasher treats differently: short ASCII, non-ASCII, long (the wasm path where it is used), bytes. */
function keys(): Array<string | Uint8Array> {
  const out: Array<string | Uint8Array> = []
  for (let i = 0; i < 2000; i++) out.push(`user:${i}`)
  for (let i = 0; i < 200; i++) out.push(`ключ-${i}-😀`)
  for (let i = 0; i < 200; i++) out.push(`${i}:`.padEnd(300, 'abcdefghijklmnopqrstuvwxyz'))
  for (let i = 0; i < 200; i++) out.push(new Uint8Array(64).map((_, j) => (i * 31 + j) & 0xff))
  return out
}

function base64(bytes: Uint8Array): string {
  let text = ''
  for (let i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i])
  return btoa(text)
}

export async function run(): Promise<{ snapshot: string; present: number; falsePositives: number; added: number; wasm: boolean; readerDisagrees: number }> {
  const filter = await MemoryBloomFilter.create({ capacity: 5000, errorRate: 0.01, seed: 12345 })
  const all = keys()
  let added = 0
  for (const key of all) if (filter.add(key)) added++
  let present = 0
  for (const key of all) if (filter.has(key)) present++
  let falsePositives = 0
  for (let i = 0; i < 10_000; i++) if (filter.has(`absent:${i}`)) falsePositives++
  const copy = await MemoryBloomFilter.import(filter.export())
  if (!all.every((key) => copy.has(key))) throw new Error('the imported copy lost a key')
  // The snapshot reader (issue 37), on the same bytes: the filter's answer for every key and probe.
  const reader = openSnapshot(filter.export())
  const probes = Array.from({ length: 10_000 }, (_, i) => `absent:${i}`)
  let readerDisagrees = 0
  for (const key of [...all, ...probes]) if (reader.has(key) !== filter.has(key)) readerDisagrees++
  // wasm: whether this runtime hashes long keys with xxhash-wasm (the bytes must not depend on it).
  return { snapshot: base64(filter.export()), present, falsePositives, added, wasm: wasmHashingSafe(), readerDisagrees }
}

;(globalThis as { bloomkitEdge?: unknown }).bloomkitEdge = { run }
