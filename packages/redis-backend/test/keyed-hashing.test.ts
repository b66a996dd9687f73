import { expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, uniqueName } from './support/clients.js'
import { expectSeedHidden } from '../../../test-support/hidden-seed.js'

const { redis, cluster } = bothDeployments()

test.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('%s: creators without a seed get one random secret seed, racing or later, and keep it', async (_, client) => {
  const name = uniqueName('keyed')
  const racers = await Promise.all(Array.from({ length: 4 }, () => RedisBloomFilter.create(client, name, { capacity: 1000, errorRate: 0.01 })))
  const seed = racers[0].parameters.seed
  expect(seed).not.toBe(0)
  for (const racer of racers) expect(racer.parameters.seed).toBe(seed)
  await racers[0].add('user:42')
  const later = await RedisBloomFilter.create(client, name, { capacity: 1000, errorRate: 0.01 })
  expect(later.parameters.seed).toBe(seed)
  expect(await later.has('user:42')).toBe(true)
  const other = await RedisBloomFilter.create(client, uniqueName('keyed'), { capacity: 1000, errorRate: 0.01 })
  expect(other.parameters.seed).not.toBe(seed)
  const fixed = await RedisBloomFilter.create(client, uniqueName('keyed'), { capacity: 1000, errorRate: 0.01, seed: 0 })
  expect(fixed.parameters.seed).toBe(0)
  await Promise.all([racers[0].destroy(), other.destroy(), fixed.destroy()])
})

test.each([
  ['scalable', { growth: 2 }],
  ['rotating', { window: { seconds: 60, keep: 3 } }],
] as const)('a %s layered filter hides its seed from util.inspect (console.log), as a fixed one does', async (kind, layered) => {
  const seed = 2_718_281_828
  const filter = await RedisBloomFilter.create(redis, uniqueName('keyed'), { capacity: 100, errorRate: 0.01, seed, ...layered })
  await filter.addMany(['user:1', 'user:2'])
  expect(expectSeedHidden(filter, seed)).toMatch(new RegExp(`^LayeredRedisFilter \\{\\s+kind: '${kind}',[^]*seed: '<hidden>',[^]*closed: false\\s+\\}$`))
  const fixed = await RedisBloomFilter.create(redis, uniqueName('keyed'), { capacity: 100, errorRate: 0.01, seed })
  expectSeedHidden(fixed, seed)
  await Promise.all([filter.destroy(), fixed.destroy()])
})
