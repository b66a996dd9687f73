import { BloomError } from '@bloomkit/core'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { CountingMemoryFilter } from '@bloomkit/memory-backend/counting'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { expect, test } from 'vitest'

// Issue 23, item 6: an option name no call knows (a JavaScript typo, a config object) is refused
// with a coded error naming it, not silently ignored (which would leave a default in place).

/** The error `call` throws, synchronously or as a rejection. */
async function errorOf(call: () => unknown): Promise<BloomError> {
  let error: unknown
  try {
    await call()
  } catch (caught) {
    error = caught
  }
  expect(error).toBeInstanceOf(BloomError)
  return error as BloomError
}

const typo = { capcity: 1000, errorRate: 0.01 } as never

test.each([
  ['MemoryBloomFilter.create', () => MemoryBloomFilter.create(typo)],
  ['CountingMemoryFilter.create', () => CountingMemoryFilter.create(typo)],
  ['LayeredMemoryFilter.create', () => LayeredMemoryFilter.create({ capcity: 1000, errorRate: 0.01, growth: 2 } as never)],
  ['LayeredMemoryFilter.createSync', () => LayeredMemoryFilter.createSync({ capcity: 1000, errorRate: 0.01, growth: 2 } as never)],
])('%s refuses { capcity } naming it, suggesting capacity and listing what it takes', async (call, make) => {
  const error = await errorOf(make)
  expect(error.code).toBe('BLOOM_INVALID_PARAMETER')
  expect(error.message).toContain(`${call}: unknown option "capcity" (did you mean "capacity"?)`)
  expect(error.message).toMatch(/it takes capacity, errorRate, /)
})

test('a misspelt growth or window is refused rather than making a fixed filter that never grows', async () => {
  const error = await errorOf(() => MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01, grwoth: 2 } as never))
  expect(error.message).toContain('"grwoth" (did you mean "growth"?)')
  const windowed = await errorOf(() => LayeredMemoryFilter.create({ capacity: 100, errorRate: 0.01, window: { second: 60, keep: 2 } } as never))
  expect(windowed.code).toBe('BLOOM_INVALID_PARAMETER')
  expect(windowed.message).toContain('window: unknown option "second" (did you mean "seconds"?)')
})

test('fromParameters, fromParametersSync and import with a clock refuse unknown names too; several are named at once', async () => {
  const parameters = { bits: 1024, hashes: 3, shards: 1, seed: 1, hashs: 4 } as never
  for (const make of [
    () => MemoryBloomFilter.fromParameters(parameters),
    () => MemoryBloomFilter.fromParametersSync(parameters),
    () => CountingMemoryFilter.fromParameters(parameters),
    () => CountingMemoryFilter.fromParametersSync(parameters),
  ]) {
    const error = await errorOf(make)
    expect(error.message).toContain('unknown option "hashs" (did you mean "hashes"?)')
  }
  const layered = await LayeredMemoryFilter.create({ capacity: 100, errorRate: 0.01, growth: 2 })
  layered.add('k')
  const snapshot = layered.export()
  const error = await errorOf(() => LayeredMemoryFilter.import(snapshot, { clok: () => 0, zzz: 1 } as never))
  expect(error.message).toContain('LayeredMemoryFilter.import: unknown options "clok" (did you mean "clock"?), "zzz"; it takes clock')
  expect((await errorOf(() => LayeredMemoryFilter.importSync(snapshot, { clok: () => 0 } as never))).code).toBe('BLOOM_INVALID_PARAMETER')
})

test('every name the types allow is still taken', async () => {
  const filter = await MemoryBloomFilter.create({ capacity: 1000, errorRate: 0.01, shards: 2, seed: 3, layout: 'blocked' })
  expect(filter.add('k')).toBe(true)
  const counting = await CountingMemoryFilter.create({ capacity: 1000, errorRate: 0.01, shards: 1, seed: 3, layout: 'classic' })
  expect(counting.add('k')).toBe(true)
  const rotating = await LayeredMemoryFilter.create({ capacity: 100, errorRate: 0.01, window: { seconds: 60, keep: 2 }, growth: 2, tightening: 0.5, clock: () => 0, seed: 1 })
  expect(rotating.add('k')).toBe(true)
  const again = MemoryBloomFilter.fromParametersSync({ ...filter.parameters })
  expect(again.has('k')).toBe(false)
  // A counting: true or growth on the fixed entry is still pointed at its own entry, not refused as unknown.
  expect((await errorOf(() => MemoryBloomFilter.create({ capacity: 10, errorRate: 0.01, counting: true } as never))).message).toMatch(/CountingMemoryFilter/)
})
