import { afterAll, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { LayeredRedisFilter, RedisBloomFilter, RedisCountingFilter } from '@bloomkit/redis-backend'
import { standaloneClient, uniqueName } from './support/clients.js'

// Issue 23, item 6: an option name no Redis call knows (a JavaScript typo, a config object, an
// option of another backend) is refused with a coded error naming it, before anything is written.

const redis = standaloneClient()
afterAll(async () => {
  await redis.quit()
})

async function errorOf(promise: Promise<unknown>): Promise<BloomError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(BloomError)
  return error as BloomError
}

const typo = { capcity: 1000, errorRate: 0.01 }

test.each([
  ['RedisBloomFilter.create', (name: string) => RedisBloomFilter.create(redis, name, typo as never)],
  ['RedisBloomFilter.create', (name: string) => RedisBloomFilter.create(redis, name, { ...typo, counting: true } as never)],
  ['RedisBloomFilter.create', (name: string) => RedisBloomFilter.create(redis, name, { ...typo, growth: 2 } as never)],
  ['RedisCountingFilter.create', (name: string) => RedisCountingFilter.create(redis, name, typo as never)],
  ['LayeredRedisFilter.create', (name: string) => LayeredRedisFilter.create(redis, name, { ...typo, growth: 2 } as never)],
])('%s refuses { capcity } naming it, suggesting capacity, and writes no key', async (call, make) => {
  const name = uniqueName('option-names')
  const error = await errorOf(make(name))
  expect(error.code).toBe('BLOOM_INVALID_PARAMETER')
  expect(error.message).toContain(`${call}: unknown option "capcity" (did you mean "capacity"?)`)
  expect(error.message).toMatch(/it takes .*capacity.*timeout/)
  expect(await redis.keys(`${name}*`)).toEqual([])
})

test('a LevelDB-only option (cacheBytes) is refused on Redis, naming it and what Redis takes', async () => {
  const name = uniqueName('option-names-level')
  const error = await errorOf(RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, cacheBytes: 1 << 20 } as never))
  expect(error.message).toContain('RedisBloomFilter.create: unknown option "cacheBytes"; it takes ')
  expect(error.message).toContain('keysPerCommand')
  expect(await redis.keys(`${name}*`)).toEqual([])
})

test('open, import, destroy, fromParameters and rebuild refuse unknown names and leave the filter as it was', async () => {
  const name = uniqueName('option-names-existing')
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, ttl: 3600, timeout: 5000, keysPerCommand: 512, lockWait: 1000, shards: 1, seed: 9, layout: 'blocked' })
  await filter.addMany(['a', 'b'])
  const snapshot = await filter.export()
  const before = await redis.keys(`${name}*`)
  expect((await errorOf(RedisBloomFilter.open(redis, name, { timout: 100 } as never))).message).toContain('RedisBloomFilter.open: unknown option "timout" (did you mean "timeout"?)')
  expect((await errorOf(RedisBloomFilter.import(redis, name, snapshot, { replaceParameter: true } as never))).message).toContain('"replaceParameter" (did you mean "replaceParameters"?)')
  expect((await errorOf(RedisCountingFilter.import(redis, name, snapshot, { forse: true } as never))).message).toContain('"forse" (did you mean "force"?)')
  expect((await errorOf(RedisBloomFilter.destroy(redis, name, { timeOut: 100 } as never))).message).toContain('"timeOut" (did you mean "timeout"?)')
  expect((await errorOf(LayeredRedisFilter.destroy(redis, name, { timeOut: 100 } as never))).code).toBe('BLOOM_INVALID_PARAMETER')
  expect((await errorOf(filter.rebuild(['x'], { forced: true } as never))).message).toContain('rebuild: unknown option "forced" (did you mean "force"?); it takes force')
  const other = uniqueName('option-names-parameters')
  const parameters = await errorOf(RedisBloomFilter.fromParameters(redis, other, { ...filter.parameters, hash: 3 } as never))
  expect(parameters.message).toContain('"hash" (did you mean "hashes"?)')
  expect((await errorOf(RedisCountingFilter.fromParameters(redis, other, filter.parameters, { tll: 5 } as never))).message).toContain('"tll" (did you mean "ttl"?)')
  expect(await redis.keys(`${other}*`)).toEqual([])
  // Nothing changed: the same keys, the same answers, and every name the types allow still opens it.
  expect((await redis.keys(`${name}*`)).sort()).toEqual(before.sort())
  const again = await RedisBloomFilter.open(redis, name, { kind: 'fixed', timeout: 5000, keysPerCommand: 512, scanBytesPerKey: 0, blockReads: false, batchConnection: false, coalesceWait: 0, lockWait: 1000, clock: () => 0 })
  expect(await again.hasMany(['a', 'b'])).toEqual([true, true])
  await again.close()
  await filter.destroy()
})

/** `options` behind a Proxy that counts each read of a backend option (what `checkRedisOptions` resolves). */
function counted<T extends object>(options: T): { options: T; reads: Map<string, number> } {
  const reads = new Map<string, number>()
  const watched = ['timeout', 'lockWait', 'keysPerCommand', 'scanBytesPerKey', 'blockReads', 'batchConnection', 'coalesceWait', 'ttl', 'feed', 'feedLength', 'replica', 'replaceParameters', 'force']
  const proxy = new Proxy(options, {
    get(target, key, receiver) {
      if (typeof key === 'string' && watched.includes(key)) reads.set(key, (reads.get(key) ?? 0) + 1)
      return Reflect.get(target, key, receiver) as unknown
    },
  })
  return { options: proxy, reads }
}

test('a call reads each backend option once, where its options are checked and resolved; the layers below receive the settings (issue 34 item 2)', async () => {
  const store = { timeout: 4000, lockWait: 1000, keysPerCommand: 256, scanBytesPerKey: 0, blockReads: true, batchConnection: false, coalesceWait: 0 }
  const fixed = await RedisBloomFilter.create(redis, uniqueName('settings-fixed'), { capacity: 100, errorRate: 0.01 })
  const counting = await RedisCountingFilter.create(redis, uniqueName('settings-counting'), { capacity: 100, errorRate: 0.01 })
  const layered = await RedisBloomFilter.create(redis, uniqueName('settings-layered'), { capacity: 100, errorRate: 0.01, growth: 2 })
  await layered.addMany(Array.from({ length: 300 }, (_, i) => `k:${i}`))
  const sizing = { capacity: 100, errorRate: 0.01 }
  const calls: Array<[string, object, (options: never) => Promise<{ close(): Promise<void> }>]> = [
    ['open of a fixed filter', {}, (options) => RedisBloomFilter.open(redis, fixed.name, options)],
    ['open of a counting filter', {}, (options) => RedisBloomFilter.open(redis, counting.name, options)],
    ['open of a layered filter (its layers opened too)', {}, (options) => RedisBloomFilter.open(redis, layered.name, options)],
    ['create of a fixed filter', sizing, (options) => RedisBloomFilter.create(redis, uniqueName('settings-new-fixed'), options)],
    ['create of a counting filter through the front door', { ...sizing, counting: true }, (options) => RedisBloomFilter.create(redis, uniqueName('settings-new-counting'), options)],
    ['create of a layered filter through the front door', { ...sizing, growth: 2 }, (options) => RedisBloomFilter.create(redis, uniqueName('settings-new-layered'), options)],
    ['import of a counting snapshot through the front door', {}, async (options) => RedisBloomFilter.import(redis, uniqueName('settings-import'), await counting.export(), options)],
  ]
  for (const [what, extra, call] of calls) {
    const { options, reads } = counted({ ...store, ...extra })
    const made = await call(options as never)
    expect(Object.fromEntries(reads), what).toEqual(Object.fromEntries([...reads.keys()].map((key) => [key, 1])))
    expect(reads.get('timeout'), what).toBe(1)
    await made.close()
  }
  await Promise.all([fixed.destroy(), counting.destroy(), layered.destroy()])
})
