import { playwright } from '@vitest/browser-playwright'
import { defineProject } from 'vitest/config'
import { alias, chromium } from '../../vitest.shared.js'

/** The LevelDB backend in headless Chromium (Debian's), where `level` is browser-level over IndexedDB. */
export default defineProject({
  resolve: { alias },
  test: {
    name: 'level-browser',
    include: ['src/**/*.browser.test.ts'],
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: false,
      provider: playwright({ launchOptions: { executablePath: chromium.executablePath, args: chromium.args } }),
      instances: [{ browser: 'chromium' }],
    },
  },
})
