import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'packaging',
    include: ['test/**/*.test.ts'],
    // Packing six packages, an install and three full tsc runs: ~45 s alone, and past the old
    // 120 s once on a loaded machine beside another test file (a worker per core).
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
})
