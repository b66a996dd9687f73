import { expect, test } from 'vitest'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { FIXED_CASES, GOLDEN_NOW, goldenKeys, goldenSnapshot, LAYERED_CASES, ROTATING_STEPS } from '../../../test-support/golden-snapshots.js'

// The same inputs give the same bytes as the fixtures captured before layered filters moved into core (issue 21).

test.each(Object.entries(FIXED_CASES))('a fixed filter exports the golden snapshot (%s)', async (name, { options, keys }) => {
  const filter = await MemoryBloomFilter.create(options)
  filter.addMany(goldenKeys(keys))
  const snapshot = filter.export()
  expect(Buffer.from(snapshot).equals(goldenSnapshot('memory', name, snapshot))).toBe(true)
  expect(Buffer.from((await MemoryBloomFilter.import(snapshot)).export()).equals(snapshot)).toBe(true)
})

test.each(Object.entries(LAYERED_CASES))('a layered filter exports the golden snapshot (%s)', async (name, { options, keys }) => {
  let now = GOLDEN_NOW
  const filter = await LayeredMemoryFilter.create({ ...options, clock: () => now })
  const all = goldenKeys(keys)
  if ('window' in options) {
    const part = keys / ROTATING_STEPS.length
    ROTATING_STEPS.forEach((step, i) => {
      now = GOLDEN_NOW + step
      filter.addMany(all.slice(i * part, (i + 1) * part))
    })
  } else {
    filter.addMany(all)
  }
  const snapshot = filter.export()
  expect(filter.layers().length).toBeGreaterThan(1)
  expect(Buffer.from(snapshot).equals(goldenSnapshot('memory', name, snapshot))).toBe(true)
})
