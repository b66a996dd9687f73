import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // One project per package (and per environment): packages/<name>/vitest*.config.ts.
    projects: ['packages/*/vitest*.config.ts'],
  },
})
