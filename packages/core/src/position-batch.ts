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

  constructor(capacity: number, hashes: number) {
    this.hashes = hashes
    this.shards = new Uint32Array(capacity)
    this.positions = new Uint32Array(capacity * hashes)
  }

  /**
   * The keys grouped by shard, shards in ascending order: what Redis and LevelDB stores send per key.
   * Groups may share one array (each `keys` a view of it): read them, do not write them.
   */
  groupByShard(): ShardGroup[] {
    const { size, shards } = this
    let top = 0
    for (let i = 0; i < size; i++) if (shards[i] > top) top = shards[i]
    // Few shards for the batch: a counting sort (no Map, one array of keys for all groups).
    if (top < 4 * size + 64) {
      const starts = new Uint32Array(top + 2)
      for (let i = 0; i < size; i++) starts[shards[i] + 1]++
      for (let s = 0; s <= top; s++) starts[s + 1] += starts[s]
      const fill = starts.slice(0, top + 1)
      const sorted = new Uint32Array(size)
      for (let i = 0; i < size; i++) sorted[fill[shards[i]]++] = i
      const groups: ShardGroup[] = []
      for (let s = 0; s <= top; s++) if (starts[s + 1] > starts[s]) groups.push({ shard: s, keys: sorted.subarray(starts[s], starts[s + 1]) })
      return groups
    }
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
