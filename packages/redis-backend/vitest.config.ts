import { defineProject } from 'vitest/config'
import { alias, propertySeeds } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: {
    ...propertySeeds,
    name: 'redis',
    include: ['test/**/*.test.ts'],
    // One standalone server and one 3-master Cluster for the whole run (the Cluster takes ~2 s).
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
