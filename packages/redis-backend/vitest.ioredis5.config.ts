import { fileURLToPath } from 'node:url'
import { defineProject } from 'vitest/config'
import { alias, propertySeeds } from '../../vitest.shared.js'

/**
 * The backend's main tests again, with every `import … from 'ioredis'` (the source's and the
 * tests') resolved to ioredis 5 (the workspace's `ioredis5` alias): ioredis is a peer dependency,
 * and an app brings either major.
 */
const ioredis5 = (path: string) => fileURLToPath(new URL(`../../node_modules/ioredis5/${path}`, import.meta.url))

export default defineProject({
  resolve: {
    alias: [...alias, { find: /^ioredis$/, replacement: ioredis5('built/index.js') }, { find: /^ioredis\/package\.json$/, replacement: ioredis5('package.json') }],
  },
  test: {
    ...propertySeeds,
    name: 'redis-ioredis5',
    env: { ...propertySeeds.env, IOREDIS_MAJOR: '5' },
    include: ['test/bit-store-suite.test.ts', 'test/bloom-filter.test.ts', 'test/whole-shard.test.ts', 'test/batch-connection.test.ts', 'test/data-loss.test.ts', 'test/readme.test.ts', 'test/clients.test.ts', 'test/feed.test.ts', 'test/replica.test.ts', 'test/replica-adds.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
