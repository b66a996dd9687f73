import { defineProject } from 'vitest/config'
import { alias, propertySeeds } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: { ...propertySeeds, name: 'core', include: ['test/**/*.test.ts'], testTimeout: 30_000 },
})
