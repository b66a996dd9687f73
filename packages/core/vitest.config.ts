import { defineProject } from 'vitest/config'
import { alias } from '../../vitest.shared.js'

export default defineProject({
  resolve: { alias },
  test: { name: 'core', include: ['src/**/*.test.ts'], typecheck: { enabled: true, include: ['src/**/*.test-d.ts'], tsconfig: '../../tsconfig.json' } },
})
