import { afterAll, describe, expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { legacyKeys, legacyOptions, legacyProbes, legacySnapshot, scheme1Answers } from '../../../test-support/legacy-scheme.js'
import { standaloneClient, uniqueName } from './support/clients.js'

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

describe('a Redis filter of an earlier release (classic hash scheme 1)', () => {
  test('opens with scheme 1 (its meta says 1), answers every key exactly as scheme 1 places it, and exports the same bytes', async () => {
    const snapshot = await legacySnapshot()
    const name = uniqueName('legacy')
    await RedisBloomFilter.import(redis, name, snapshot)
    expect(await redis.hget(`${name}:meta`, 'scheme')).toBe('1')
    const filter = await RedisBloomFilter.open(redis, name, { kind: 'fixed' })
    expect(filter.parameters.scheme).toBe(1)
    const probes = [...legacyKeys, ...legacyProbes]
    const expected = scheme1Answers(snapshot, probes)
    expect(expected.filter(Boolean).length).toBeGreaterThan(legacyKeys.length)
    expect(await filter.hasMany(probes)).toEqual(expected)
    expect(await Promise.all(probes.slice(0, 200).map((key) => filter.has(key)))).toEqual(expected.slice(0, 200))
    expect(Buffer.from(await filter.export())).toEqual(Buffer.from(snapshot))
    await RedisBloomFilter.destroy(redis, name)
  })

  test('create with the sizes it was made with opens it as it is, and new keys go where scheme 1 puts them', async () => {
    const name = uniqueName('legacy-create')
    await RedisBloomFilter.import(redis, name, await legacySnapshot())
    const filter = await RedisBloomFilter.create(redis, name, legacyOptions)
    expect(filter.parameters.scheme).toBe(1)
    await filter.addMany(['new:1', 'new:2'])
    expect(scheme1Answers(await filter.export(), ['new:1', 'new:2', ...legacyKeys]).every(Boolean)).toBe(true)
    await RedisBloomFilter.destroy(redis, name)
  })
})
