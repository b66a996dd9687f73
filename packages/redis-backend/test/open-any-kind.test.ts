import { describe, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { LayeredRedisFilter, RedisBloomFilter, RedisCountingFilter } from '@bloomkit/redis-backend'
import { bothDeployments, commandsOnKey, uniqueName } from './support/clients.js'

// Issue 21, item 2: RedisBloomFilter.open and .import open whatever create made under a name.

const { redis, cluster } = bothDeployments()

const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(BloomError)
    return (error as BloomError).code
  }
  return 'resolved'
}

/** A snapshot cut into chunks of `size` bytes, as a file stream would hand it over. */
function* chunksOf(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

describe.each([
  ['standalone', redis],
  ['Cluster', cluster],
] as const)('on %s', (_, client) => {
  test.each([
    ['fixed', { capacity: 500, errorRate: 0.01 }, 'fixed'],
    ['scalable', { capacity: 100, errorRate: 0.01, growth: 2 }, 'layered'],
    ['rotating', { capacity: 500, errorRate: 0.01, window: { seconds: 60, keep: 2 } }, 'layered'],
  ] as const)('open of a %s filter gives what create made, told apart by kind, with its keys', async (_what, options, kind) => {
    const name = uniqueName('any-kind')
    const made = await RedisBloomFilter.create(client, name, options)
    await made.addMany(keys('k', 300))
    const opened = await RedisBloomFilter.open(client, name)
    expect(opened.kind).toBe(kind)
    expect(opened).toBeInstanceOf(kind === 'fixed' ? RedisBloomFilter : LayeredRedisFilter)
    expect((await opened.hasMany(keys('k', 300))).every(Boolean)).toBe(true)
    if (opened.kind === 'layered') expect(await opened.layers()).toEqual(await (made as unknown as LayeredRedisFilter).layers())
    // Insisting on a kind: the same class, or BLOOM_INCOMPATIBLE for the other.
    const other = kind === 'fixed' ? 'layered' : 'fixed'
    expect(await codeOf(RedisBloomFilter.open(client, name, { kind: other }))).toBe('BLOOM_INCOMPATIBLE')
    const same = await RedisBloomFilter.open(client, name, { kind })
    expect(same.kind).toBe(kind)
    await Promise.all([opened.close(), same.close()])
    await made.destroy()
  })

  test('import of a layered snapshot, whole or in chunks, gives a layered filter; of a fixed one, a fixed filter; a kind that does not match writes nothing', async () => {
    const source = await RedisBloomFilter.create(client, uniqueName('any-kind-src'), { capacity: 50, errorRate: 0.01, growth: 2, seed: 7 })
    await source.addMany(keys('s', 200))
    const layered = await source.export()
    const probes = [...keys('s', 200), ...keys('absent', 500)]
    const expected = await source.hasMany(probes)
    for (const snapshot of [layered, chunksOf(layered, 7)]) {
      const name = uniqueName('any-kind-import')
      const copy = await RedisBloomFilter.import(client, name, snapshot)
      expect(copy.kind).toBe('layered')
      expect(await copy.hasMany(probes)).toEqual(expected)
      expect(await copy.export()).toEqual(layered)
      await (copy as LayeredRedisFilter).destroy()
    }
    const fixedSource = await RedisBloomFilter.create(client, uniqueName('any-kind-fixed'), { capacity: 200, errorRate: 0.01 })
    await fixedSource.addMany(keys('f', 100))
    const fixed = await fixedSource.export()
    const name = uniqueName('any-kind-import-fixed')
    const copy = await RedisBloomFilter.import(client, name, chunksOf(fixed, 5))
    expect(copy.kind).toBe('fixed')
    expect(await copy.export()).toEqual(fixed)
    await copy.close()
    await RedisBloomFilter.destroy(client, name)
    const refused = uniqueName('any-kind-refused')
    expect(await codeOf(RedisBloomFilter.import(client, refused, layered, { kind: 'fixed' }))).toBe('BLOOM_INCOMPATIBLE')
    expect(await codeOf(RedisBloomFilter.import(client, refused, fixed, { kind: 'layered' }))).toBe('BLOOM_INCOMPATIBLE')
    expect(await client.exists(`${refused}:meta`)).toBe(0)
    expect(await codeOf(RedisBloomFilter.open(client, refused))).toBe('BLOOM_NOT_FOUND')
    expect(await codeOf(RedisBloomFilter.open(client, refused, { kind: 'bogus' as never }))).toBe('BLOOM_INVALID_PARAMETER')
    await Promise.all([source.destroy(), fixedSource.destroy()])
  })

  test('a counting filter opens and imports through the front door as a RedisCountingFilter, byte for byte', async () => {
    const name = uniqueName('any-kind-counting')
    const counting = await RedisCountingFilter.create(client, name, { capacity: 100, errorRate: 0.01 })
    await counting.addMany(['a', 'b', 'b'])
    const snapshot = await counting.export()
    const opened = await RedisBloomFilter.open(client, name)
    expect(opened).toBeInstanceOf(RedisCountingFilter)
    expect(opened.kind).toBe('counting')
    expect(await opened.hasMany(['a', 'b'])).toEqual([true, true])
    const copyName = uniqueName('any-kind-counting-copy')
    const copy = await RedisBloomFilter.import(client, copyName, snapshot)
    expect(copy.kind).toBe('counting')
    if (copy.kind !== 'counting') throw new Error('not a counting filter')
    expect(await copy.remove('b')).toBe(true)
    expect(await copy.has('b')).toBe(true)
    expect(Buffer.from(await (await RedisBloomFilter.open(client, name, { kind: 'counting' })).export())).toEqual(Buffer.from(snapshot))
    await Promise.all([counting.destroy(), copy.destroy()])
  })

  test('open reads the meta hash once, whatever kind the name holds and whatever kind is asked for; another kind is BLOOM_INCOMPATIBLE naming both', async () => {
    const made = {
      fixed: await RedisBloomFilter.create(client, uniqueName('once-fixed'), { capacity: 100, errorRate: 0.01 }),
      counting: await RedisBloomFilter.create(client, uniqueName('once-counting'), { capacity: 100, errorRate: 0.01, counting: true }),
      layered: await RedisBloomFilter.create(client, uniqueName('once-layered'), { capacity: 100, errorRate: 0.01, growth: 2 }),
    }
    for (const [found, filter] of Object.entries(made)) {
      for (const asked of [undefined, 'fixed', 'counting', 'layered'] as const) {
        let opened: { kind: string; close(): Promise<void> } | undefined
        let refused: unknown
        // HGETALL and HGET of the meta (a layered filter's list is then read with HMGET, its layers under names of their own).
        const reads = await commandsOnKey(client, `${filter.name}:meta`, async () => {
          opened = await RedisBloomFilter.open(client, filter.name, asked === undefined ? {} : { kind: asked }).catch((error: unknown) => {
            refused = error
            return undefined
          })
        })
        expect(reads.filter((command) => command === 'hgetall' || command === 'hget'), `${found} opened as ${asked ?? 'any kind'}`).toEqual(['hgetall'])
        if (asked === undefined || asked === found) {
          expect(opened?.kind).toBe(found)
          await opened?.close()
        } else {
          expect(refused).toBeInstanceOf(BloomError)
          expect((refused as BloomError).code).toBe('BLOOM_INCOMPATIBLE')
          expect((refused as BloomError).message).toBe(`filter "${filter.name}" is a ${found} filter, not a ${asked} one (kind: '${asked}' was asked for)`)
        }
      }
    }
    await Promise.all(Object.values(made).map((filter) => filter.destroy()))
  })
})
