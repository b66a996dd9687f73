import { defineProject } from 'vitest/config'
import { alias, propertySeeds } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: {
    ...propertySeeds,
    name: 'guard',
    include: ['test/**/*.test.ts'],
    // One throwaway redis-server for the whole run; each test uses its own guard name.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
