import { afterAll, expect, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { FIXED_CASES, GOLDEN_NOW, goldenKeys, goldenSnapshot, LAYERED_CASES, ROTATING_STEPS } from '../../../test-support/golden-snapshots.js'
import { clusterClient, standaloneClient, uniqueName } from './support/clients.js'

// The same inputs give the same bytes as the fixtures captured before layered filters moved into core (issue 21).

const redis = standaloneClient()
const cluster = clusterClient()
afterAll(async () => {
  await Promise.all([redis.quit(), cluster.quit()])
})
const clients = [
  ['standalone', redis],
  ['Cluster', cluster],
] as const

const fixedCases = clients.flatMap(([where, client]) => Object.entries(FIXED_CASES).map(([name, c]) => [name, where, client, c] as const))
const layeredCases = clients.flatMap(([where, client]) => Object.entries(LAYERED_CASES).map(([name, c]) => [name, where, client, c] as const))

test.each(fixedCases)('a fixed filter exports the golden snapshot (%s, %s)', async (name, _where, client, { options, keys }) => {
  const filter = await RedisBloomFilter.create(client, uniqueName('golden'), options)
  await filter.addMany(goldenKeys(keys))
  const snapshot = await filter.export()
  await filter.destroy()
  expect(Buffer.from(snapshot).equals(goldenSnapshot('redis', name, snapshot))).toBe(true)
})

test.each(layeredCases)('a layered filter exports the golden snapshot (%s, %s)', async (name, _where, client, { options, keys }) => {
  let now = GOLDEN_NOW
  const filter = await RedisBloomFilter.create(client, uniqueName('golden'), { ...options, clock: () => now })
  const all = goldenKeys(keys)
  if ('window' in options) {
    const part = keys / ROTATING_STEPS.length
    for (const [i, step] of ROTATING_STEPS.entries()) {
      now = GOLDEN_NOW + step
      await filter.addMany(all.slice(i * part, (i + 1) * part))
    }
  } else {
    await filter.addMany(all)
  }
  const snapshot = await filter.export()
  expect((await filter.layers()).length).toBeGreaterThan(1)
  await filter.destroy()
  expect(Buffer.from(snapshot).equals(goldenSnapshot('redis', name, snapshot))).toBe(true)
})
