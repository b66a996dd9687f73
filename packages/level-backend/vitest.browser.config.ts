import { defineProject } from 'vitest/config'
import { alias, chromiumBrowser, propertySeeds } from '../../vitest.shared.js'

/** The LevelDB backend in headless Chromium (Debian's), where `level` is browser-level over IndexedDB. */
export default defineProject({
  resolve: { alias },
  test: {
    ...propertySeeds,
    name: 'level-browser',
    include: ['test/**/*.browser.test.ts'],
    browser: chromiumBrowser,
  },
})
