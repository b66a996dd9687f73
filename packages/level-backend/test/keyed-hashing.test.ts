import { afterAll, expect, test } from 'vitest'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { tempFolders } from './support/temp-folders.js'
import { expectSeedHidden } from '../../../test-support/hidden-seed.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

test('create without a seed: a random secret seed, kept in the folder; a later create without a seed opens it with that seed', async () => {
  const one = folders.path()
  const first = await LevelBloomFilter.create(one, { capacity: 1000, errorRate: 0.01 })
  const seed = first.parameters.seed
  expect(seed).not.toBe(0)
  await first.add('user:42')
  await first.close()
  const other = await LevelBloomFilter.create(folders.path(), { capacity: 1000, errorRate: 0.01 })
  expect(other.parameters.seed).not.toBe(seed)
  await other.close()
  const again = await LevelBloomFilter.create(one, { capacity: 1000, errorRate: 0.01 })
  expect(again.parameters.seed).toBe(seed)
  expect(await again.has('user:42')).toBe(true)
  await again.close()
})

test('create with a seed other than the stored one is refused (BLOOM_INCOMPATIBLE); seed: 0 stays reproducible', async () => {
  const where = folders.path()
  const first = await LevelBloomFilter.create(where, { capacity: 1000, errorRate: 0.01, seed: 0 })
  expect(first.parameters.seed).toBe(0)
  await first.close()
  await expect(LevelBloomFilter.create(where, { capacity: 1000, errorRate: 0.01, seed: 5 })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
  const same = await LevelBloomFilter.create(where, { capacity: 1000, errorRate: 0.01, seed: 0 })
  expect(same.parameters.seed).toBe(0)
  await same.close()
})

test.each([
  ['scalable', { growth: 2 }],
  ['rotating', { window: { seconds: 60, keep: 3 } }],
] as const)('a %s layered folder hides its seed from util.inspect (console.log), as a fixed one does', async (kind, layered) => {
  const seed = 2_718_281_828
  const filter = await LevelBloomFilter.create(folders.path(), { capacity: 100, errorRate: 0.01, seed, ...layered })
  await filter.addMany(['user:1', 'user:2'])
  expect(expectSeedHidden(filter, seed)).toMatch(new RegExp(`^LayeredLevelFilter \\{\\s+kind: '${kind}',[^]*seed: '<hidden>',[^]*closed: false\\s+\\}$`))
  await filter.close()
  const fixed = await LevelBloomFilter.create(folders.path(), { capacity: 100, errorRate: 0.01, seed })
  expectSeedHidden(fixed, seed)
  await fixed.close()
})
