import { defineProject } from 'vitest/config'
import { alias } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: { name: 'core', include: ['test/**/*.test.ts'], typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: '../../tsconfig.json' } },
})
