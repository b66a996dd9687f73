import { expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, namesOf, PATHS, standaloneClient, uniqueName } from './support/clients.js'

const { redis, cluster } = bothDeployments()

const range = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}:${from + i}`)

let sourceStarted = false

/**
 * Yields keys slowly, so that readers and writers run while the rebuild is in progress. Like a
 * real source (a database scan), it starts listing only when first pulled.
 */
async function* slowly(keys: string[], pause: number) {
  sourceStarted = true
  for (let i = 0; i < keys.length; i++) {
    if (i % 500 === 0) await new Promise((resolve) => setTimeout(resolve, pause))
    yield keys[i]
  }
}

// The reader and writer take each path (with whole shards every add copies itself into the next
// generation inside the transaction that ORs it into the live shard).
test.each([redis, cluster].flatMap((client) => PATHS.map(([path, options]) => [client === redis ? 'standalone' : 'Cluster', path, client, options] as const)))(
  'rebuild while others read and write: no false negative for kept keys, adds made meanwhile survive, dropped keys go (%s, %s)',
  async (_, _path, client, options) => {
    const name = uniqueName('rebuild')
    const filter = await RedisBloomFilter.create(client, name, { capacity: 20_000, errorRate: 0.001, shards: 6 })
    const reader = await RedisBloomFilter.open(client, name, options)
    const writer = await RedisBloomFilter.open(client, name, options)
    const kept = range('kept', 0, 4000)
    const dropped = range('dropped', 0, 4000)
    await filter.addMany([...kept, ...dropped])

    let rebuilding = true
    let reads = 0
    const readLoop = (async () => {
      while (rebuilding) {
        const answers = await reader.hasMany(kept)
        reads++
        const missing = answers.indexOf(false)
        if (missing !== -1) throw new Error(`false negative for ${kept[missing]} during rebuild (read ${reads})`)
      }
    })()
    // Keys added once the rebuild reads its source are not in the source: the rebuild must keep them.
    // (Keys added earlier are in a source that starts listing on first pull, as a scan does.)
    const addedMeanwhile: string[] = []
    sourceStarted = false
    const writeLoop = (async () => {
      for (let i = 0; rebuilding; i++) {
        const key = `meanwhile:${i}`
        const counts = sourceStarted
        await writer.add(key)
        if (counts) addedMeanwhile.push(key)
      }
    })()
    await filter.rebuild(slowly(kept, 60))
    rebuilding = false
    await Promise.all([readLoop, writeLoop])
    expect(reads).toBeGreaterThan(1)
    expect(addedMeanwhile.length).toBeGreaterThan(2)
    expect((await reader.hasMany(kept)).every(Boolean)).toBe(true)
    expect((await reader.hasMany(addedMeanwhile)).every(Boolean)).toBe(true)
    // Dropped keys are gone but for false positives (p = 0.1 %, so a handful at most).
    const stillThere = (await reader.hasMany(dropped)).filter(Boolean).length
    expect(stillThere).toBeLessThan(30)
    const info = await filter.info()
    expect(info.generation).toBe(2)
    expect(info.state).toBe('ready')
    expect(await client.exists(namesOf(filter).nextShard(0))).toBe(0)
    await filter.destroy()
  },
)

test('a rebuild that fails once its swaps have begun still counts a generation (partial adds rely on it, docs/SPEC.md 9.5)', async () => {
  // A real refusal at the swap: an ACL user that may do everything but RENAME (the swap script's
  // command; scripts run with their caller's permissions), so every step before the swaps succeeds.
  const user = `norename-${uniqueName('acl')}`
  await redis.call('ACL', 'SETUSER', user, 'on', 'nopass', '~*', '&*', '+@all', '-rename')
  const restricted = standaloneClient({ username: user, password: 'x' })
  try {
    const name = uniqueName('failed-swap')
    const filter = await RedisBloomFilter.create(redis, name, { capacity: 1000, errorRate: 0.01, shards: 2 })
    await filter.addMany(['a', 'b'])
    const generation = async () => Number(await redis.hget(namesOf(filter).meta, 'generation'))
    const before = await generation()
    const viaRestricted = await RedisBloomFilter.open(restricted, name, { kind: 'fixed' })
    await expect(viaRestricted.rebuild(['a', 'c'])).rejects.toMatchObject({ code: 'BLOOM_STORE_UNAVAILABLE' })
    expect(await generation()).toBe(before + 1)
    expect((await filter.info()).state).toBe('ready')
    // Nothing was swapped (every RENAME was refused): the old bits serve, unflagged.
    expect(await filter.hasMany(['a', 'b'])).toEqual([true, true])
    await filter.destroy()
  } finally {
    await restricted.quit()
    await redis.call('ACL', 'DELUSER', user)
  }
})

test('one rebuild at a time: a second gets BLOOM_LOCKED; force takes over a crashed one; a failing source keeps the old bits', async () => {
  const filter = await RedisBloomFilter.create(redis, uniqueName('lock'), { capacity: 1000, errorRate: 0.01, shards: 2 })
  await filter.addMany(['a', 'b'])
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  async function* blocked() {
    yield 'a'
    await gate
    yield 'c'
  }
  const first = filter.rebuild(blocked())
  await new Promise((resolve) => setTimeout(resolve, 100))
  const second = await filter.rebuild(['x']).then(() => undefined, (e: unknown) => e)
  expect((second as BloomError).code).toBe('BLOOM_LOCKED')
  release()
  await first
  expect(await filter.hasMany(['a', 'b', 'c'])).toEqual([true, false, true])

  async function* failing() {
    yield 'z'
    throw new Error('source failed')
  }
  await expect(filter.rebuild(failing())).rejects.toThrow('source failed')
  expect(await filter.hasMany(['a', 'c', 'z'])).toEqual([true, true, false])
  expect((await filter.info()).state).toBe('ready')

  // A crashed rebuild leaves the lock; force takes it over.
  await redis.hset(namesOf(filter).meta, 'state', 'rebuilding', 'token', 'dead')
  expect(((await filter.rebuild(['q']).then(() => undefined, (e: unknown) => e)) as BloomError).code).toBe('BLOOM_LOCKED')
  await filter.rebuild(['q'], { force: true })
  expect(await filter.hasMany(['a', 'q'])).toEqual([false, true])
  await filter.destroy()
})
