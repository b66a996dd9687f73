import { expect, test } from 'vitest'
import { MemoryBitStore, MemoryBloomFilter } from '@bloomkit/memory-backend'

// Apart from memory-bloom-filter.test.ts, which the runtimes projects (scripts/runtimes/projects.ts)
// run again on every Node line: allocating and counting 512 MiB took ~30 s there on a loaded machine,
// and index arithmetic past 2^32 does not depend on the runtime.
test('a filter above 2^32 bits places keys in every shard, past bit 2^32 of the whole', async () => {
  const parameters = { bits: 2 * (2 ** 31 + 2 ** 20), hashes: 3, shards: 2, seed: 1 }
  const filter = await MemoryBloomFilter.fromParameters(parameters)
  expect(filter.parameters.bits).toBeGreaterThan(2 ** 32)
  const added = Array.from({ length: 2000 }, (_, i) => `k${i}`)
  filter.addMany(added)
  expect(filter.hasMany(added).every(Boolean)).toBe(true)
  const counts = (filter as unknown as { store: MemoryBitStore }).store.countBits()
  expect(counts[0] + counts[1]).toBeGreaterThan(5900)
  expect(counts[1]).toBeGreaterThan(2500)
  // The last megabyte of the second shard (bits ≥ 2^32 of the whole) got keys too.
  const store = (filter as unknown as { store: MemoryBitStore }).store
  const tail = store.readShard(1, (2 ** 31 + 2 ** 20) / 8 - 2 ** 17, 2 ** 17)
  expect(tail.some((byte) => byte !== 0)).toBe(true)
  filter.close()
}, 90_000) // counting 512 MiB of bits takes ~4 s on a 2-core machine at load 2, and 15–36 s at load 20
