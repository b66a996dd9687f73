import { afterAll, expect, test } from 'vitest'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { FIXED_CASES, GOLDEN_NOW, goldenKeys, goldenSnapshot, LAYERED_CASES, ROTATING_STEPS } from '../../../test-support/golden-snapshots.js'
import { tempFolders } from './support/temp-folders.js'

// The same inputs give the same bytes as the fixtures captured before layered filters moved into core (issue 21).

const folders = tempFolders()
afterAll(() => folders.removeAll())

test.each(Object.entries(FIXED_CASES))('a fixed filter exports the golden snapshot (%s)', async (name, { options, keys }) => {
  const filter = await LevelBloomFilter.create(folders.path(), options)
  await filter.addMany(goldenKeys(keys))
  const snapshot = await filter.export()
  await filter.close()
  expect(Buffer.from(snapshot).equals(goldenSnapshot('level', name, snapshot))).toBe(true)
})

test.each(Object.entries(LAYERED_CASES))('a layered filter exports the golden snapshot (%s)', async (name, { options, keys }) => {
  let now = GOLDEN_NOW
  const filter = await LevelBloomFilter.create(folders.path(), { ...options, clock: () => now })
  const all = goldenKeys(keys)
  if ('window' in options) {
    const part = keys / ROTATING_STEPS.length
    for (const [i, step] of ROTATING_STEPS.entries()) {
      now = GOLDEN_NOW + step
      await filter.addMany(all.slice(i * part, (i + 1) * part))
    }
  } else {
    await filter.addMany(all)
  }
  const snapshot = await filter.export()
  expect((await filter.layers()).length).toBeGreaterThan(1)
  await filter.close()
  expect(Buffer.from(snapshot).equals(goldenSnapshot('level', name, snapshot))).toBe(true)
})
