import type { TestProjectInlineConfiguration } from 'vitest/config'
import { alias, propertySeeds } from '../../vitest.shared.js'
import { runtimePool } from './pool.js'
import { lineOf, RUNTIMES } from './runtimes.mjs'

/**
 * The runtimes subset: existing test files (each keeps its one home in its package) that together
 * cover what differs between Node lines, run again on every runtime of runtimes.mjs with `test`.
 * On Node 22+ core hashes long keys in WebAssembly (wasmHashingSafe), on 20 in JavaScript, so the
 * hashing files and the memory properties (keys up to 400 chars and 300 bytes) run that path there.
 */
const SUBSET = [
  // This runtime is the one asked for; WebAssembly hashing on 22+ gives the answers of pure JS.
  'scripts/runtimes/runtime.test.ts',
  // Core: hashing (properties; the WebAssembly XXH32 against xxhash-wasm), SPEC's vectors.
  'packages/core/test/key-hasher.test.ts',
  'packages/core/test/xxhash32-wasm.test.ts',
  'packages/core/test/spec.test.ts',
  'packages/core/test/layered-spec.test.ts',
  'packages/core/test/counting-spec.test.ts',
  // Memory: the filter's properties, and snapshots byte for byte as the golden ones.
  'packages/memory-backend/test/memory-bloom-filter.test.ts',
  'packages/memory-backend/test/golden-snapshots.test.ts',
  // LevelDB (classic-level's N-API build): create, add, close, open again.
  'packages/level-backend/test/bloom-filter.test.ts',
  // Redis, standalone and Cluster, through ioredis.
  'packages/redis-backend/test/bloom-filter.test.ts',
  // The CLI in child processes of this runtime: build, check, Ctrl-C mid-build.
  'scripts/runtimes/cli.test.ts',
  // The guard's read path: filter, Redis cache, single-flight loads.
  'scripts/runtimes/guard.test.ts',
]

/** The name of the project that runs the subset on Node `version`: runtimes-node22, … */
export const runtimeProjectName = (version: string): string => `runtimes-node${lineOf(version)}`

/**
 * One vitest project per tested runtime, each running {@link SUBSET} in child processes of that
 * runtime's Node (see pool.ts), with the servers of global-setup.ts. `BLOOMKIT_RUNTIME` tells the
 * files which version they should be running on.
 */
export function runtimeProjects(): TestProjectInlineConfiguration[] {
  return RUNTIMES.filter((runtime) => runtime.test).map(({ version }) => ({
    resolve: { alias },
    test: {
      ...propertySeeds,
      env: { ...propertySeeds.env, BLOOMKIT_RUNTIME: version },
      name: runtimeProjectName(version),
      root: new URL('../../', import.meta.url).pathname,
      include: SUBSET,
      pool: runtimePool(version),
      globalSetup: ['scripts/runtimes/global-setup.ts'],
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  }))
}
