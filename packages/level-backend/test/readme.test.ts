import { afterAll, describe, expect, test } from 'vitest'
import { readmeSnippetTests, tsBlocks } from '../../../test-support/readme-snippets.js'
import { tempFolders } from './support/temp-folders.js'

/** The README's LevelDB examples, and the root README's, with './data/…' folders moved into temp folders. */
const readmes = ['../README.md', '../../../README.md'].map((path) => new URL(path, import.meta.url))
const select = (code: string) => code.includes("'@bloomkit/level-backend'")
const folders = tempFolders()
afterAll(() => folders.removeAll())

test('the package README has LevelDB examples', () => {
  expect(tsBlocks(readmes[0]).filter(select).length).toBeGreaterThanOrEqual(3)
})

readmeSnippetTests(
  { describe, test, expect, afterAll },
  { readmes, select, rewrite: (code) => code.replaceAll("'./data/", `'${folders.make()}/`), workDir: new URL('../.readme-snippets/', import.meta.url) },
)
