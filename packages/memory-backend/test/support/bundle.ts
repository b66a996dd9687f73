/**
 * Bundles test/fingerprint.ts (and so the memory backend and core, from their sources)
 * into one ES module for a plain page or a bare `node` process, with the Vite that vitest already
 * depends on (no extra dependency). Built for the browser platform, so a Node built-in anywhere in
 * the graph shows up as an externalized module rather than being bundled.
 */
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { alias } from '../../../../vitest.shared.js'

/** The bundle, and what went into it. */
export interface Bundle {
  code: string
  /** Modules the bundle still imports at run time: none for a self-contained bundle. */
  imports: string[]
  /** Every module that was bundled (absolute paths, or Vite's ids for stand-ins). */
  moduleIds: string[]
}

interface ViteChunk {
  type: 'chunk' | 'asset'
  fileName: string
  code: string
  imports: string[]
  dynamicImports: string[]
  moduleIds: string[]
}

type ViteBuild = (config: object) => Promise<{ output: ViteChunk[] } | { output: ViteChunk[] }[]>

async function loadViteBuild(): Promise<ViteBuild> {
  // vite is vitest's dependency, not ours: resolve it from vitest's own location.
  const fromHere = createRequire(import.meta.url)
  const vitePath = createRequire(fromHere.resolve('vitest/package.json')).resolve('vite')
  return ((await import(pathToFileURL(vitePath).href)) as { build: ViteBuild }).build
}

/** One ES module exporting `fingerprint()` and the corpus (see fingerprint.ts). */
export async function bundleFingerprint(): Promise<Bundle> {
  const build = await loadViteBuild()
  const result = await build({
    configFile: false,
    logLevel: 'silent',
    root: fileURLToPath(new URL('../..', import.meta.url)),
    resolve: { alias },
    build: {
      write: false,
      minify: false,
      target: 'es2022',
      lib: { entry: fileURLToPath(new URL('./fingerprint.ts', import.meta.url)), formats: ['es'], fileName: 'fingerprint' },
      // One self-contained module is what the pages below load.
      rollupOptions: { output: { inlineDynamicImports: true } },
    },
  })
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output)
  const chunks = outputs.filter((output) => output.type === 'chunk')
  if (chunks.length !== 1) throw new Error(`expected one chunk, got ${chunks.length}`)
  const [chunk] = chunks
  // An inlined dynamic import may still be listed, as the chunk itself.
  const imports = [...chunk.imports, ...chunk.dynamicImports].filter((name) => name !== chunk.fileName)
  return { code: chunk.code, imports, moduleIds: chunk.moduleIds }
}
