import { playwright } from '@vitest/browser-playwright'
import { fileURLToPath } from 'node:url'

const root = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** Tests import the packages' sources, so they run without a build and stack traces point at .ts files. */
export const alias: { find: RegExp; replacement: string }[] = [
  { find: /^@bloomkit\/core\/testing$/, replacement: root('./packages/core/src/testing/index.ts') },
  { find: /^@bloomkit\/core\/store$/, replacement: root('./packages/core/src/store/index.ts') },
  { find: /^@bloomkit\/core\/spec$/, replacement: root('./packages/core/src/spec.ts') },
  { find: /^@bloomkit\/core$/, replacement: root('./packages/core/src/index.ts') },
  { find: /^@bloomkit\/memory-backend\/counting$/, replacement: root('./packages/memory-backend/src/counting.ts') },
  { find: /^@bloomkit\/memory-backend\/reader$/, replacement: root('./packages/memory-backend/src/reader.ts') },
  { find: /^@bloomkit\/memory-backend\/layered$/, replacement: root('./packages/memory-backend/src/layered.ts') },
  { find: /^@bloomkit\/memory-backend$/, replacement: root('./packages/memory-backend/src/index.ts') },
  { find: /^@bloomkit\/level-backend$/, replacement: root('./packages/level-backend/src/index.ts') },
  { find: /^@bloomkit\/redis-backend$/, replacement: root('./packages/redis-backend/src/index.ts') },
  { find: /^@bloomkit\/guard$/, replacement: root('./packages/guard/src/index.ts') },
]

/** Where Debian's chromium lives, and the flags this machine needs (shared/NOTES.md). */
export const chromium = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
}

/** Vitest's browser mode in headless Debian Chromium: the `test.browser` block of every browser project. */
export const chromiumBrowser = {
  enabled: true,
  headless: true,
  screenshotFailures: false,
  provider: playwright({ launchOptions: { executablePath: chromium.executablePath, args: chromium.args } }),
  instances: [{ browser: 'chromium' as const }],
}

/**
 * The seed every fast-check property runs with in `npm test`, so that the same commit gives the
 * same answer. `npm run test:explore` runs the properties with fresh random seeds instead.
 */
export const FIXED_PROPERTY_SEED = 20_261_125

/**
 * `BLOOMKIT_FC_SEED=<n>` runs every property with seed n (to replay a failure: each property test's
 * name ends with "(with seed=n)", and fast-check's report repeats it with the shrunk case's path);
 * `BLOOMKIT_EXPLORE=1` gives each property a fresh random seed; otherwise {@link FIXED_PROPERTY_SEED}.
 */
function propertySeed(): string {
  if (process.env.BLOOMKIT_FC_SEED !== undefined) return process.env.BLOOMKIT_FC_SEED
  return process.env.BLOOMKIT_EXPLORE === '1' ? '' : String(FIXED_PROPERTY_SEED)
}

/** Spread into every project's `test` block: the setup file that applies {@link propertySeed}. */
export const propertySeeds = {
  setupFiles: [root('./test-support/property-seed.ts'), root('./test-support/repeatable-randomness.ts')],
  env: { BLOOMKIT_FC_SEED: propertySeed() },
}
