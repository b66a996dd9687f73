import { afterAll, describe, expect, test } from 'vitest'
import { LevelBloomFilter } from '@bloomkit/level-backend'
import { legacyKeys, legacyOptions, legacyProbes, legacySnapshot, scheme1Answers } from '../../../test-support/legacy-scheme.js'
import { tempFolders } from './support/temp-folders.js'

const folders = tempFolders()
afterAll(() => folders.removeAll())

describe('a folder of an earlier release (classic hash scheme 1)', () => {
  test('opens with scheme 1, answers every key exactly as scheme 1 places it (false positives included), and exports the same bytes', async () => {
    const snapshot = await legacySnapshot()
    const folder = folders.path('legacy')
    await (await LevelBloomFilter.import(folder, snapshot)).close()
    const filter = await LevelBloomFilter.open(folder, { kind: 'fixed' })
    expect(filter.parameters.scheme).toBe(1)
    const probes = [...legacyKeys, ...legacyProbes]
    const expected = scheme1Answers(snapshot, probes)
    expect(expected.filter(Boolean).length).toBeGreaterThan(legacyKeys.length) // some false positives to keep
    expect(await filter.hasMany(probes)).toEqual(expected)
    expect(Buffer.from(await filter.export())).toEqual(Buffer.from(snapshot))
    await filter.close()
  })

  test('create with the sizes it was made with opens it as it is, and new keys go where scheme 1 puts them', async () => {
    const snapshot = await legacySnapshot()
    const folder = folders.path('legacy-create')
    await (await LevelBloomFilter.import(folder, snapshot)).close()
    const filter = await LevelBloomFilter.create(folder, legacyOptions)
    expect(filter.parameters.scheme).toBe(1)
    await filter.addMany(['new:1', 'new:2'])
    const exported = await filter.export()
    expect(scheme1Answers(exported, ['new:1', 'new:2', ...legacyKeys]).every(Boolean)).toBe(true)
    await filter.close()
  })
})
