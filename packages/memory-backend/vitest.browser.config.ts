import { defineProject } from 'vitest/config'
import { alias, chromiumBrowser, propertySeeds } from '../../vitest.shared.js'

/** The memory backend in headless Chromium (Debian's), compared with Node in the same run. */
export default defineProject({
  resolve: { alias },
  test: {
    ...propertySeeds,
    name: 'memory-browser',
    include: ['test/**/*.browser.test.ts'],
    globalSetup: ['test/support/browser-global-setup.ts'],
    browser: chromiumBrowser,
  },
})
