import { invalidParameter } from '../errors.js'
import { shardBytesOf, type FilterParameters } from '../parameters.js'

/** Bytes of bits per piece when a filter is read, exported or merged piece by piece: 1 MiB. */
export const CHUNK_BYTES = 1 << 20

/** A byte range of one shard. */
export interface ShardRange {
  readonly shard: number
  /** First byte within the shard. */
  readonly offset: number
  /** Bytes in the range, at most the chunk size. */
  readonly length: number
}

/**
 * Every byte of a filter's shards, shard after shard, in ranges of at most `chunkBytes`: the order
 * of a snapshot's payload. Export and merge read through it so any size moves in bounded memory.
 * `shardBytes` is the bytes each shard holds: its bits' by default, 4× that for a counting filter.
 */
export function* shardRanges(parameters: FilterParameters, chunkBytes = CHUNK_BYTES, shardBytes = shardBytesOf(parameters)): Generator<ShardRange> {
  for (let shard = 0; shard < parameters.shards; shard++) {
    for (let offset = 0; offset < shardBytes; offset += chunkBytes) {
      yield { shard, offset, length: Math.min(chunkBytes, shardBytes - offset) }
    }
  }
}

/**
 * What a backend's `import` accepts: a whole snapshot, or its bytes in order as chunks (a file
 * stream, `exportChunks()` of any filter).
 */
export type SnapshotSource = Uint8Array | AsyncIterable<Uint8Array> | Iterable<Uint8Array>

/**
 * The chunks of a {@link SnapshotSource}, in order, each checked to be a `Uint8Array`.
 * @throws BloomError `BLOOM_INVALID_PARAMETER` naming `snapshot` or `snapshot chunk`.
 */
export async function* snapshotChunks(source: SnapshotSource): AsyncGenerator<Uint8Array> {
  if (source instanceof Uint8Array) {
    yield source
    return
  }
  if (source === null || typeof source !== 'object' || (!(Symbol.asyncIterator in source) && !(Symbol.iterator in source))) {
    throw invalidParameter('snapshot', 'a Uint8Array or an (async) iterable of Uint8Array chunks', source)
  }
  for await (const chunk of source as AsyncIterable<Uint8Array>) {
    if (!(chunk instanceof Uint8Array)) throw invalidParameter('snapshot chunk', 'a Uint8Array', chunk)
    yield chunk
  }
}
