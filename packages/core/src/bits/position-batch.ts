/** Keys of one batch that share a shard: `keys` holds their indexes in the batch, in input order. */
export interface ShardGroup {
  readonly shard: number
  readonly keys: Uint32Array
}

/**
 * The hashed form of a batch of keys, handed to a {@link BitStore}: for key `i`, its shard is
 * `shards[i]` and its positions in that shard are `positions[i·hashes … i·hashes + hashes − 1]`.
 * Arrays may be longer than `size`; only the first `size` keys count.
 */
export class PositionBatch {
  /** Keys in the batch. */
  size = 0
  readonly hashes: number
  readonly shards: Uint32Array
  readonly positions: Uint32Array
  /**
   * Key `i`'s two hash lanes (docs/SPEC.md section 2) as unsigned 32-bit numbers: `a` at
   * `pairs[2i]`, `b` at `pairs[2i + 1]`, the values its shard and positions were computed from.
   * Every batch core builds fills them; a store that records the keys it adds (a Redis filter
   * with a feed, docs/SPEC.md 9.12) needs them, and refuses a batch whose pairs disagree with its
   * positions.
   */
  readonly pairs: Uint32Array

  constructor(capacity: number, hashes: number) {
    this.hashes = hashes
    this.shards = new Uint32Array(capacity)
    this.positions = new Uint32Array(capacity * hashes)
    this.pairs = new Uint32Array(capacity * 2)
  }

  /** The keys grouped by shard, shards in ascending order: what Redis and LevelDB stores send per key. */
  groupByShard(): ShardGroup[] {
    const counts = new Map<number, number>()
    for (let i = 0; i < this.size; i++) {
      const shard = this.shards[i]
      counts.set(shard, (counts.get(shard) ?? 0) + 1)
    }
    const groups = [...counts.keys()]
      .sort((x, y) => x - y)
      .map((shard) => ({ shard, keys: new Uint32Array(counts.get(shard)!), filled: 0 }))
    const byShard = new Map(groups.map((group) => [group.shard, group]))
    for (let i = 0; i < this.size; i++) {
      const group = byShard.get(this.shards[i])!
      group.keys[group.filled++] = i
    }
    return groups.map(({ shard, keys }) => ({ shard, keys }))
  }
}
