import { afterAll, describe, expect, test } from 'vitest'
import { LayeredRedisFilter, RedisBloomFilter } from '@bloomkit/redis-backend'
import type { Cluster, Redis } from 'ioredis'
import { clusterClient, standaloneClient, uniqueName } from './support/clients.js'

// docs/SPEC.md 9.8, "Counts", several writers at once (issue 33 item 6): what "new" means when two
// writers add the same keys to a layered filter together. Check and write are separate steps, so
// it is per writer: exactly one is told "new" when both writes land in one layer; both may be when
// they land in different layers (a layer filled between one's check and the other's write), and
// then both layers hold the key. Never none for a key no layer held; counts sum to the answers.

const clients: Array<[string, Redis | Cluster, Redis | Cluster]> = [
  ['standalone', standaloneClient(), standaloneClient()],
  ['Cluster', clusterClient(), clusterClient()],
]
afterAll(async () => {
  for (const [, a, b] of clients) await Promise.all([a.quit(), b.quit()])
})

const keys = Array.from({ length: 20_000 }, (_, i) => `race:${i}`)

/** Adds every key in calls of 250, so that two writers' calls interleave finely. */
async function addAll(filter: LayeredRedisFilter): Promise<boolean[]> {
  const answers: boolean[] = []
  for (let at = 0; at < keys.length; at += 250) answers.push(...(await filter.addMany(keys.slice(at, at + 250))))
  return answers
}

const trues = (answers: readonly boolean[]) => answers.filter(Boolean).length

describe.each(clients)('two writers adding the same keys at once, on %s', (_, one, two) => {
  test('scalable, layers filling during the race: each key told "new" at least once, twice only when two layers hold it; counts sum to the answers', async () => {
    const name = uniqueName('layered-race')
    // At 1e-9 no key of these seems held by chance: a key told "new" by neither would be the library's fault.
    const a = await LayeredRedisFilter.create(one, name, { capacity: 1000, errorRate: 1e-9, growth: 2, seed: 31 })
    const b = await LayeredRedisFilter.open(two, name)
    const [byA, byB] = await Promise.all([addAll(a), addAll(b)])
    expect(byA.every((answer, i) => answer || byB[i])).toBe(true)
    expect((await a.hasMany(keys)).every(Boolean)).toBe(true)
    const layers = await a.layers()
    expect(layers.length).toBeGreaterThanOrEqual(5)
    expect(layers.reduce((sum, layer) => sum + layer.count, 0)).toBe(trues(byA) + trues(byB))
    const twice = keys.filter((_, i) => byA[i] && byB[i])
    console.log(`${twice.length} of ${keys.length} keys told "new" by both writers`)
    if (twice.length > 0) {
      const held = new Array<number>(twice.length).fill(0)
      const ids = String(await one.hget(`${name}:meta`, 'layers')).split(',').map((entry) => entry.split('/')[0])
      for (const id of ids) {
        const layer = await RedisBloomFilter.open(one, `${name}:L${id}`, { kind: 'fixed' })
        ;(await layer.hasMany(twice)).forEach((found, i) => (held[i] += found ? 1 : 0))
        await layer.close()
      }
      expect(held.every((n) => n >= 2)).toBe(true)
    }
    await b.close()
    await a.destroy()
  })

  test('rotating without growth (one layer a window, the clock still): exactly one writer is told "new" for each key', async () => {
    const name = uniqueName('layered-race-window')
    const clock = () => 5_000 * 60_000
    const a = await LayeredRedisFilter.create(one, name, { capacity: 25_000, errorRate: 1e-9, window: { seconds: 60, keep: 2 }, seed: 32, clock })
    const b = await LayeredRedisFilter.open(two, name, { clock })
    const [byA, byB] = await Promise.all([addAll(a), addAll(b)])
    expect(byA.every((answer, i) => answer !== byB[i])).toBe(true)
    expect((await a.layers()).map((layer) => layer.count)).toEqual([keys.length])
    await b.close()
    await a.destroy()
  })
})
