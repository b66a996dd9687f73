import { expect, test } from 'vitest'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { earlierGoldenSnapshot, FIXED_CASES, GOLDEN_NAMES, GOLDEN_NOW, goldenKeys, goldenProbes, goldenSnapshot, LAYERED_CASES, ROTATING_STEPS } from '../../../test-support/golden-snapshots.js'

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

test.each(GOLDEN_NAMES)('a snapshot of the release before honest sizing (%s) imports with its own sizes, holds its keys, and exports the same bytes', async (name) => {
  const before = earlierGoldenSnapshot('memory', name)
  const clock = () => GOLDEN_NOW + ROTATING_STEPS[ROTATING_STEPS.length - 1]
  const filter = await LayeredMemoryFilter.import(before, { clock })
  expect(Buffer.from(filter.export()).equals(Buffer.from(before))).toBe(true)
  const fixed = FIXED_CASES[name as keyof typeof FIXED_CASES]
  const layered = LAYERED_CASES[name as keyof typeof LAYERED_CASES]
  // A rotating filter has dropped its oldest window by the last step; every other case holds every key.
  if (fixed !== undefined || !('window' in layered.options)) expect(filter.hasMany(goldenKeys(fixed?.keys ?? layered.keys)).every(Boolean)).toBe(true)
  expect(filter.hasMany(goldenProbes()).filter(Boolean).length).toBeLessThan(200)
})
