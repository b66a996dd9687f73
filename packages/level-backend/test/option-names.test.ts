import { existsSync, readdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { BloomError } from '@bloomkit/core'
import { CountingLevelFilter, LayeredLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { tempFolders } from './support/temp-folders.js'

// Issue 23, item 6: an option name no LevelDB call knows (a JavaScript typo, a config object, an
// option of another backend) is refused with a coded error naming it, before anything is written.

const folders = tempFolders('bloomkit-option-names-')
afterAll(() => folders.removeAll())

async function errorOf(promise: Promise<unknown>): Promise<BloomError> {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(BloomError)
  return error as BloomError
}

test.each([
  ['LevelBloomFilter.create', (where: string) => LevelBloomFilter.create(where, { capcity: 1000, errorRate: 0.01 } as never)],
  ['LevelBloomFilter.create', (where: string) => LevelBloomFilter.create(where, { capcity: 1000, errorRate: 0.01, counting: true } as never)],
  ['LevelBloomFilter.create', (where: string) => LevelBloomFilter.create(where, { capcity: 1000, errorRate: 0.01, growth: 2 } as never)],
  ['CountingLevelFilter.create', (where: string) => CountingLevelFilter.create(where, { capcity: 1000, errorRate: 0.01 } as never)],
  ['LayeredLevelFilter.create', (where: string) => LayeredLevelFilter.create(where, { capcity: 1000, errorRate: 0.01, growth: 2 } as never)],
])('%s refuses { capcity } naming it, suggesting capacity, and creates no folder', async (call, make) => {
  const where = folders.path()
  const error = await errorOf(make(where))
  expect(error.code).toBe('BLOOM_INVALID_PARAMETER')
  expect(error.message).toContain(`${call}: unknown option "capcity" (did you mean "capacity"?)`)
  expect(error.message).toMatch(/it takes .*capacity.*cacheBytes/)
  expect(existsSync(where)).toBe(false)
  expect(readdirSync(dirname(where))).toEqual([])
})

test('a Redis-only option (ttl) is refused on LevelDB, naming it and what LevelDB takes', async () => {
  const where = folders.path()
  const error = await errorOf(LevelBloomFilter.create(where, { capacity: 1000, errorRate: 0.01, ttl: 60 } as never))
  expect(error.message).toContain('LevelBloomFilter.create: unknown option "ttl"; it takes ')
  expect(error.message).toContain('pageBytes')
  expect(existsSync(where)).toBe(false)
})

test('open and import refuse unknown names and leave the folder as it was; fromParameters checks its own names', async () => {
  const where = folders.path()
  const filter = await LevelBloomFilter.create(where, { capacity: 1000, errorRate: 0.01, cacheBytes: 1 << 20, sync: false, checkpointBytes: 1 << 20, pageBytes: 4096, shards: 1, seed: 5, layout: 'blocked' })
  await filter.addMany(['a', 'b'])
  const snapshot = await filter.export()
  await filter.close()
  const open = await errorOf(LevelBloomFilter.open(where, { cacheByte: 1 << 20 } as never))
  expect(open.message).toContain('LevelBloomFilter.open: unknown option "cacheByte" (did you mean "cacheBytes"?)')
  expect((await errorOf(LayeredLevelFilter.open(where, { clok: () => 0 } as never))).message).toContain('"clok" (did you mean "clock"?)')
  const target = folders.path()
  const imported = await errorOf(LevelBloomFilter.import(target, snapshot, { knd: 'fixed' } as never))
  expect(imported.message).toContain('LevelBloomFilter.import: unknown option "knd" (did you mean "kind"?)')
  expect(existsSync(target)).toBe(false)
  const counting = folders.path()
  const parameters = await errorOf(CountingLevelFilter.fromParameters(counting, { bits: 1024, hashes: 3, shards: 1, seed: 1, sheme: 1 } as never))
  expect(parameters.message).toContain('"sheme" (did you mean "scheme"?)')
  expect(existsSync(counting)).toBe(false)
  // The filter itself is untouched, and every option the types allow still opens it.
  const again = await LevelBloomFilter.open(where, { kind: 'fixed', cacheBytes: 1 << 20, sync: false, checkpointBytes: 1 << 20, clock: () => 0 })
  expect(await again.hasMany(['a', 'b'])).toEqual([true, true])
  await again.close()
})
