import fc from 'fast-check'
import { prop } from '../../../test-support/property-test.js'
import { expect } from 'vitest'
import { PositionBatch } from '@bloomkit/core/store'

/** The grouping by its definition: shards ascending, each shard's keys in input order. */
function model(shards: readonly number[]): Array<{ shard: number; keys: number[] }> {
  const byShard = new Map<number, number[]>()
  shards.forEach((shard, key) => byShard.set(shard, [...(byShard.get(shard) ?? []), key]))
  return [...byShard.keys()].sort((x, y) => x - y).map((shard) => ({ shard, keys: byShard.get(shard)! }))
}

// Few shards (many keys each) and many (mostly one key each).
const shard = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 65_535 }))

prop([fc.array(shard, { maxLength: 300 }), fc.integer({ min: 0, max: 5 })], { seed: 20261125, numRuns: 300 })(
  'groupByShard groups every key by its shard, shards ascending, input order within each',
  (shards, spare) => {
    // A batch larger than its size: keys past `size` must not count.
    const batch = new PositionBatch(shards.length + spare, 1)
    batch.shards.set(shards)
    batch.shards.fill(7, shards.length)
    batch.size = shards.length
    const groups = batch.groupByShard().map(({ shard, keys }) => ({ shard, keys: [...keys] }))
    expect(groups).toEqual(model(shards))
  },
)
