import { defineProject } from 'vitest/config'
import { alias, propertySeeds } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: {
    ...propertySeeds,
    name: 'memory',
    // Property and statistical tests run seconds on a busy 2-core machine; 5 s timed them out.
    testTimeout: 30_000,
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.browser.test.ts'],
  },
})
