// A replica of a layered filter (issue 35 item 5, docs/SPEC.md 9.13): every layer is a fixed
// filter with a feed, held in this process by its own replica. Keys added by another process,
// in layers it listed meanwhile, read present to a strict check begun after their adds; the
// answers are the server's; keys the layers show present cost no command at all.
import { expect, test, vi } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, errorOf, uniqueName } from './support/clients.js'
import { keyRange } from './support/feeds.js'

const { redis, cluster } = bothDeployments()

test.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('a replica of a scalable filter answers as the server, through layers listed after it opened (%s)', async (_, client) => {
  const name = uniqueName('replica-layered')
  const direct = await RedisBloomFilter.create(client, name, { capacity: 200, errorRate: 0.01, growth: 2, feed: true, seed: 3 })
  await direct.addMany(keyRange('before', 0, 300))
  const replica = await RedisBloomFilter.open(client, name, { kind: 'layered', replica: true })
  const absent = keyRange('never', 0, 2000)
  for (let round = 0; round < 5; round++) {
    // Each round grows the filter by new layers the replica has not opened yet.
    const keys = keyRange(`r${round}`, 0, 150 * 2 ** round)
    await direct.addMany(keys)
    expect((await replica.hasMany(keys)).every(Boolean), `round ${round}, batch`).toBe(true)
    const singles = keys.slice(-20)
    expect((await Promise.all(singles.map((key) => replica.has(key)))).every(Boolean), `round ${round}, single calls`).toBe(true)
    expect(await replica.hasMany(absent)).toEqual(await direct.hasMany(absent))
  }
  expect((await replica.layers()).length).toBe((await direct.layers()).length)
  expect((await replica.layers()).length).toBeGreaterThan(4)
  // Adds through it reach the server; the other instance sees them.
  expect((await replica.addMany(keyRange('mine', 0, 100))).every(Boolean)).toBe(true)
  expect((await direct.hasMany(keyRange('mine', 0, 100))).every(Boolean)).toBe(true)
  await replica.close()
  await direct.destroy()
})

test('keys every layer replica shows present are answered with no command (standalone)', async () => {
  const name = uniqueName('replica-layered-local')
  const direct = await RedisBloomFilter.create(redis, name, { capacity: 200, errorRate: 0.01, growth: 2, feed: true })
  const keys = keyRange('k', 0, 1000)
  await direct.addMany(keys)
  const replica = await RedisBloomFilter.open(redis, name, { replica: true })
  expect((await replica.hasMany(keys)).every(Boolean)).toBe(true)
  const spy = vi.spyOn(redis, 'sendCommand')
  expect((await replica.hasMany(keys)).every(Boolean)).toBe(true)
  expect(await replica.has('k:7')).toBe(true)
  const sent = spy.mock.calls.length
  spy.mockRestore()
  expect(sent).toBe(0)
  await replica.close()
  await direct.destroy()
})

test('a layered filter without feeds refuses a replica with BLOOM_INCOMPATIBLE, naming the way out', async () => {
  const name = uniqueName('replica-layered-plain')
  const plain = await RedisBloomFilter.create(redis, name, { capacity: 200, errorRate: 0.01, growth: 2 })
  const error = await errorOf(RedisBloomFilter.open(redis, name, { replica: true }))
  expect(error.code).toBe('BLOOM_INCOMPATIBLE')
  expect(error.message).toMatch(/feed: true/)
  await plain.destroy()
})

test('a replica of a rotating filter finds keys added in the current window by another instance, and forgets passed windows with it (standalone)', async () => {
  const name = uniqueName('replica-rotating')
  let now = 1_000_000_000
  const clock = () => now
  const window = { seconds: 60, keep: 2 }
  const direct = await RedisBloomFilter.create(redis, name, { capacity: 500, errorRate: 0.001, window, feed: true, clock })
  const replica = await RedisBloomFilter.open(redis, name, { kind: 'layered', replica: true, clock })
  const absent = keyRange('never', 0, 500)
  for (let step = 0; step < 4; step++) {
    const keys = keyRange(`w${step}`, 0, 300)
    await direct.addMany(keys)
    expect((await replica.hasMany(keys)).every(Boolean), `window ${step}`).toBe(true)
    expect(await replica.hasMany(absent)).toEqual(await direct.hasMany(absent))
    if (step >= window.keep) expect(await replica.hasMany(keyRange(`w${step - window.keep}`, 0, 300))).toEqual(await direct.hasMany(keyRange(`w${step - window.keep}`, 0, 300)))
    now += window.seconds * 1000
  }
  await replica.close()
  await direct.destroy()
})

test('import of a layered snapshot with replica (which implies feed: true) gives every layer a feed, as its meta says, and answers through the replica (standalone)', async () => {
  const source = await RedisBloomFilter.create(redis, uniqueName('replica-layered-source'), { capacity: 100, errorRate: 0.01, growth: 2, seed: 5 })
  await source.addMany(keyRange('s', 0, 400))
  const name = uniqueName('replica-layered-import')
  const imported = await RedisBloomFilter.import(redis, name, await source.export(), { kind: 'layered', replica: true })
  const layers = await imported.layers()
  expect(layers.length).toBeGreaterThan(1)
  // An import lists its layers as 1 … n.
  for (let id = 1; id <= layers.length; id++) {
    const fed = await RedisBloomFilter.open(redis, `${name}:L${id}`, { kind: 'fixed' })
    expect(fed.feedLength, `layer ${id}`).toBe(1024)
    await fed.close()
  }
  expect((await imported.hasMany(keyRange('s', 0, 400))).every(Boolean)).toBe(true)
  await imported.close()
  await Promise.all([source.destroy(), RedisBloomFilter.destroy(redis, name)])
})
