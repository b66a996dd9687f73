import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // One project per package (and per environment): packages/<name>/vitest*.config.ts; and
    // scripts/vitest.config.ts: the packed tarballs installed into a fresh app.
    projects: ['packages/*/vitest*.config.ts', 'scripts/vitest.config.ts'],
  },
})
