import { afterAll, test } from 'vitest'
import { layeredFilterSuite } from '@bloomkit/core/testing'
import { LayeredLevelFilter } from '@bloomkit/level-backend'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

layeredFilterSuite({
  test,
  name: 'LayeredLevelFilter',
  timeout: 30_000,
  factory: (options) => LayeredLevelFilter.create(folders.path(), options),
  importer: (snapshot, options) => LayeredLevelFilter.import(folders.path(), snapshot, options),
})
