// ESLint with typescript-eslint. Formatting is left alone: no rule here rewrites layout, so the
// linter never reformats anyone's files. `npm test` runs the fast, syntactic rules (`eslint .`);
// `pnpm run lint:promises` (BLOOMKIT_LINT_TYPES=1) adds the type-aware promise rules, which catch a
// promise nobody awaits (a dropped store error can become a false negative) but take minutes on
// this 2-core machine, too long for every test run.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const typeAware = process.env.BLOOMKIT_LINT_TYPES === '1'
const NODE_GLOBALS = Object.fromEntries(
  ['process', 'console', 'URL', 'performance', 'Buffer', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'structuredClone', 'TextEncoder', 'TextDecoder', 'fetch', 'AbortController', 'globalThis'].map((name) => [name, 'readonly']),
)

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '**/.readme-snippets/**', '**/.vitest-tmp/**', 'benchmarks/quick/**', 'coverage/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_name` marks a parameter or binding kept on purpose (a callback's position, a destructured rest).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Flags `buffer[--i] = …` as the last write of a countdown, an idiom of the RESP encoder.
      'no-useless-assignment': 'off',
    },
  },
  {
    files: ['**/test/**/*.ts', 'test-support/**/*.ts', 'scripts/**/*.test.ts'],
    rules: {
      // `toMatchObject({ message: /x/ })` passes whatever the message: a RegExp has no own keys, so
      // vitest's subset check finds nothing to compare. expect.stringMatching(/x/) compares.
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='toMatchObject'] Property > Literal[regex]",
          message: 'toMatchObject ignores a RegExp value (it passes whatever the property holds): use expect.stringMatching(/…/).',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: NODE_GLOBALS },
  },
  ...(typeAware
    ? [
        {
          files: ['**/*.ts'],
          languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
          rules: {
            // Promises: every store call is awaited or handled, never dropped.
            '@typescript-eslint/no-floating-promises': 'error',
            '@typescript-eslint/no-misused-promises': 'error',
            '@typescript-eslint/await-thenable': 'error',
          },
        },
      ]
    : []),
)
