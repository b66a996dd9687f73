import { expect, test } from 'vitest'
import { LayeredRedisFilter, RedisBloomFilter } from '@bloomkit/redis-backend'
import { earlierGoldenSnapshot, FIXED_CASES, GOLDEN_NAMES, GOLDEN_NOW, goldenKeys, goldenProbes, goldenSnapshot, LAYERED_CASES, ROTATING_STEPS } from '../../../test-support/golden-snapshots.js'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { bothDeployments, uniqueName } from './support/clients.js'

// The same inputs give the same bytes as the fixtures captured before layered filters moved into core (issue 21).

const { redis, deployments: clients } = bothDeployments()

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

test.each(GOLDEN_NAMES)('a snapshot of the release before honest sizing (%s) imports with its own sizes, answers as it did (keys and false positives), and exports the same bytes', async (name) => {
  const before = earlierGoldenSnapshot('redis', name)
  const clock = () => GOLDEN_NOW + ROTATING_STEPS[ROTATING_STEPS.length - 1]
  const fixed = name in FIXED_CASES
  const reference = await LayeredMemoryFilter.import(before, { clock })
  const keys = [...goldenKeys((FIXED_CASES[name as keyof typeof FIXED_CASES] ?? LAYERED_CASES[name as keyof typeof LAYERED_CASES]).keys), ...goldenProbes()]
  const name2 = uniqueName(`before-${name}`)
  const filter = fixed ? await RedisBloomFilter.import(redis, name2, before) : await LayeredRedisFilter.import(redis, name2, before, { clock })
  expect(await filter.hasMany(keys)).toEqual(reference.hasMany(keys))
  expect(Buffer.from(await filter.export()).equals(Buffer.from(before))).toBe(true)
  await filter.destroy()
})
