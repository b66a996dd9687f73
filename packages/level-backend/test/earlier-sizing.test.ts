import { afterAll, describe, expect, test } from 'vitest'
import { sizeFilter, type FilterParameters, type SizingOptions } from '@bloomkit/core'
import { earlierSizeFilter } from '@bloomkit/core/store'
import { CountingLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

const keys = Array.from({ length: 300 }, (_, i) => `k:${i}`)

/** A folder holding a filter of exactly `parameters`, as an earlier release's create left it, with `keys` in it. */
async function folderWith(parameters: FilterParameters): Promise<string> {
  const memory = await MemoryBloomFilter.fromParameters(parameters)
  memory.addMany(keys)
  const folder = folders.path()
  await (await LevelBloomFilter.import(folder, memory.export())).close()
  return folder
}

// Sizes that honest sizing (the expected rate at most the rate asked) moved: blocked by default, and classic.
const cases: Array<[string, SizingOptions]> = [
  ['blocked, by default', { capacity: 20_000, errorRate: 0.01 }],
  ['classic', { capacity: 10_000, errorRate: 0.001, layout: 'classic' }],
]

describe('create over a folder an earlier release made with the same options', () => {
  test.each(cases)('%s: the sizes differ, and create (with or without the seed) opens the stored filter with its own size and keys', async (_, options) => {
    const earlier = { ...earlierSizeFilter(options), seed: 4242 }
    expect(earlier.bits).not.toBe(sizeFilter(options).bits)
    const folder = await folderWith(earlier)
    for (const again of [options, { ...options, seed: 4242 }]) {
      const filter = await LevelBloomFilter.create(folder, again)
      expect(filter.parameters).toEqual(earlier)
      expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
      await filter.close()
    }
  })

  test('a filter of any other size, or another seed asked for, is still refused with BLOOM_INCOMPATIBLE', async () => {
    const options = cases[0][1]
    const earlier = earlierSizeFilter({ ...options, seed: 4242 })
    const folder = await folderWith({ ...earlier, bits: sizeFilter(options).bits + 512 })
    await expect(LevelBloomFilter.create(folder, options)).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
    const other = await folderWith(earlier)
    await expect(LevelBloomFilter.create(other, { ...options, seed: 4243 })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
  })

  test('a counting filter too', async () => {
    const options = cases[0][1]
    const earlier = { ...earlierSizeFilter(options), seed: 99 }
    const folder = folders.path()
    const made = await CountingLevelFilter.fromParameters(folder, earlier)
    await made.addMany(keys)
    await made.close()
    const filter = await LevelBloomFilter.create(folder, { ...options, counting: true })
    expect(filter.parameters).toEqual(earlier)
    expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
    await filter.close()
  })
})
