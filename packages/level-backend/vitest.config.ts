import { defineProject } from 'vitest/config'
import { alias, propertySeeds } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: {
    ...propertySeeds,
    name: 'level',
    include: ['test/**/*.test.ts'],
    exclude: ['test/**/*.browser.test.ts'],
    testTimeout: 30_000,
  },
})
