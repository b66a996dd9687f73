import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { LayeredLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { withRaw } from './support/raw-level.js'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

test('a layered folder whose manifest names an unknown policy is refused with BLOOM_UNSUPPORTED_VERSION, not read as scalable', async () => {
  const folder = folders.path('policy')
  const filter = await LevelBloomFilter.create(folder, { capacity: 10, errorRate: 0.01, growth: 2, seed: 3 })
  await filter.add('kept')
  await filter.close()
  await withRaw(join(folder, 'manifest'), async (db) => {
    const manifest = JSON.parse(new TextDecoder().decode(await db.get('layered')))
    expect(manifest.policy.kind).toBe('scalable')
    manifest.policy.kind = 'sliding'
    await db.put('layered', new TextEncoder().encode(JSON.stringify(manifest)))
  })
  await expect(LayeredLevelFilter.open(folder)).rejects.toMatchObject({ code: 'BLOOM_UNSUPPORTED_VERSION', message: expect.stringContaining('"sliding"') })
})
