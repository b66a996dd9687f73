import { defineProject } from 'vitest/config'
import { alias } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: { name: 'level', include: ['src/**/*.test.ts'], exclude: ['src/**/*.browser.test.ts'], testTimeout: 30_000 },
})
