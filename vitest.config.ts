import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { runtimeProjects } from './scripts/runtimes/projects.js'

export default defineConfig({
  test: {
    // One project per package (and per environment): packages/<name>/vitest*.config.ts;
    // scripts/vitest.config.ts: the packed tarballs installed into a fresh app; and
    // vitest.types.config.ts: every package's type tests; and runtimes-node22, -node24, -node26: a
    // subset of those files again on each Node of scripts/runtimes/runtimes.mjs (projects.ts).
    projects: ['packages/*/vitest*.config.ts', 'scripts/vitest.config.ts', 'vitest.types.config.ts', ...runtimeProjects()],
    // One test file per core. Vitest's own default for `vitest run` is one fewer than the cores,
    // which on a 2-core machine ran the 111 files one at a time, though most of them spend much of
    // their time waiting on redis-server, LevelDB or a child process (see benchmarks/README.md).
    maxWorkers: availableParallelism(),
  },
})
