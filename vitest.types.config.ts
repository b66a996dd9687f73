import { defineProject } from 'vitest/config'

/**
 * The type tests (`packages/<name>/test/*.test-d.ts`, expectTypeOf and @ts-expect-error), in one
 * project: vitest's type check runs `tsc -p tsconfig.json`, which checks the whole repository
 * whichever project asks, so one run reports every package's type tests. (With a type check per
 * package, the same program was checked five times, by tsc processes sharing one incremental
 * build-info file.)
 */
export default defineProject({
  test: {
    name: 'types',
    include: [],
    typecheck: { enabled: true, only: true, include: ['packages/*/test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
})
