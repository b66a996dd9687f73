import { test } from 'vitest'
import { layeredFilterSuite } from '@bloomkit/core/testing'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'

layeredFilterSuite({
  test,
  name: 'LayeredMemoryFilter',
  factory: (options) => LayeredMemoryFilter.createSync(options),
  importer: async (snapshot, options) => {
    const filter = await LayeredMemoryFilter.import(snapshot, options)
    if (filter.kind !== 'layered') throw new Error('expected a layered filter')
    return filter
  },
})
