import { afterAll, describe, expect, test } from 'vitest'
import { type SizingOptions } from '@bloomkit/core'
import { counterKernels, earlierSizeFilter } from '@bloomkit/core/store'
import { RedisBloomFilter, RedisCountingFilter, sizeRedisFilter } from '@bloomkit/redis-backend'
import { standaloneClient, uniqueName } from './support/clients.js'

const { COUNTER_BITS } = counterKernels

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

const keys = Array.from({ length: 300 }, (_, i) => `k:${i}`)

// Sizes that honest sizing (the expected rate at most the rate asked) moved: blocked by default, and classic.
const cases: Array<[string, SizingOptions]> = [
  ['blocked, by default', { capacity: 20_000, errorRate: 0.01 }],
  ['classic', { capacity: 10_000, errorRate: 0.001, layout: 'classic' }],
]

describe('create over a Redis filter an earlier release made with the same options', () => {
  test.each(cases)('%s: the sizes differ, and create (with or without the seed) opens the stored filter with its own size and keys', async (_, options) => {
    const earlier = { ...sizeRedisFilter(options, 0, earlierSizeFilter), seed: 4242 }
    expect(earlier.bits).not.toBe(sizeRedisFilter(options).bits)
    const name = uniqueName('earlier')
    const made = await RedisBloomFilter.fromParameters(redis, name, earlier)
    await made.addMany(keys)
    await made.close()
    for (const again of [options, { ...options, seed: 4242 }]) {
      const filter = await RedisBloomFilter.create(redis, name, again)
      expect(filter.parameters).toEqual(earlier)
      expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
      await filter.close()
    }
    await RedisBloomFilter.destroy(redis, name)
  })

  test('a filter of any other size, or another seed asked for, is still refused with BLOOM_INCOMPATIBLE', async () => {
    const options = cases[0][1]
    const earlier = { ...sizeRedisFilter(options, 0, earlierSizeFilter), seed: 4242 }
    const name = uniqueName('earlier-other')
    await (await RedisBloomFilter.fromParameters(redis, name, { ...earlier, bits: sizeRedisFilter(options).bits + 512 })).close()
    await expect(RedisBloomFilter.create(redis, name, options)).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
    await RedisBloomFilter.destroy(redis, name)
    await (await RedisBloomFilter.fromParameters(redis, name, earlier)).close()
    await expect(RedisBloomFilter.create(redis, name, { ...options, seed: 4243 })).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
    await RedisBloomFilter.destroy(redis, name)
  })

  test('a counting filter too', async () => {
    const options = cases[0][1]
    const name = uniqueName('earlier-counting')
    const earlier = { ...sizeRedisFilter(options, COUNTER_BITS, earlierSizeFilter), seed: 99 }
    expect(earlier.bits).not.toBe(sizeRedisFilter(options, COUNTER_BITS).bits)
    const counting = await RedisCountingFilter.fromParameters(redis, name, earlier)
    await counting.addMany(keys)
    await counting.close()
    const filter = await RedisBloomFilter.create(redis, name, { ...options, counting: true })
    expect(filter.parameters).toEqual(earlier)
    expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
    await filter.close()
    await RedisBloomFilter.destroy(redis, name)
  })
})
