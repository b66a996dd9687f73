import { afterAll, describe, expect, test } from 'vitest'
import { readmeSnippetTests } from '../../../test-support/readme-snippets.js'

// The README examples core and memory own (Redis and LevelDB ones run in their packages' tests).
readmeSnippetTests(
  { describe, test, expect, afterAll },
  {
    readmes: ['../../../README.md', '../../core/README.md', '../README.md'].map((path) => new URL(path, import.meta.url)),
    select: (code) => /@bloomkit\/(core|memory-backend(\/counting)?)'/.test(code) && !/level-backend|redis-backend|ioredis/.test(code),
    workDir: new URL('../.readme-snippets/', import.meta.url),
  },
)
