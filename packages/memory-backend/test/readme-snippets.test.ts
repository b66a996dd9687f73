import { afterAll, describe, expect, test } from 'vitest'
import { readmeSnippetTests } from '../../../test-support/readme-snippets.js'

// The README examples core and memory own (Redis and LevelDB ones run in their packages' tests).
readmeSnippetTests(
  { describe, test, expect, afterAll },
  {
    readmes: ['../../../README.md', '../../core/README.md', '../README.md'].map((path) => new URL(path, import.meta.url)),
    select: (code) => /@bloomkit\/(core|memory-backend(\/counting|\/reader)?)'/.test(code) && !/level-backend|redis-backend|ioredis/.test(code),
    // The root README's browser path: the page fetches what the server example exported.
    rewrite: (code) =>
      code
        .replace('const namesSnapshot = names.export()', 'const namesSnapshot = names.export(); (globalThis as { served?: Uint8Array }).served = namesSnapshot')
        .replace("await fetch('/names.blmk')", 'new Response((globalThis as { served?: Uint8Array }).served)'),
    workDir: new URL('../.readme-snippets/', import.meta.url),
  },
)
