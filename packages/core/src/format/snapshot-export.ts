import type { BitStore, Outcome } from '../bit-store.js'
import type { FilterParameters } from '../parameters.js'
import { itemsFromSetBits } from '../fill.js'
import type { SyncAsync } from '../sync-async.js'
import { shardRanges } from './chunks.js'
import { crc32 } from './crc32.js'
import { encodeSnapshotHeader, snapshotBytes, trailer } from './snapshot.js'

/**
 * A fixed or counting filter's whole snapshot (docs/SPEC.md): the header, `store`'s bits shard by
 * shard, the CRC-32; `BloomFilter.export`'s body, for a filter already checked open.
 */
export function exportSnapshot<Sync extends boolean>(io: SyncAsync<Sync>, store: BitStore<Sync>, parameters: FilterParameters): Outcome<Sync, Uint8Array> {
  const out = new Uint8Array(snapshotBytes(parameters))
  let at = 0
  let crc = 0
  const put = (piece: Uint8Array) => {
    out.set(piece, at)
    at += piece.length
  }
  return io.then(store.countBits(), (counts) => {
    put(encodeSnapshotHeader({ parameters, items: itemsFromSetBits(counts, parameters) }))
    const payload = io.forEach(shardRanges(parameters), ({ shard, offset, length }) =>
      io.then(store.readShard(shard, offset, length), (bytes) => {
        crc = crc32(bytes, crc)
        put(bytes)
      }),
    )
    return io.then(payload, () => {
      put(trailer(crc))
      return out
    })
  })
}

/** The snapshot as chunks of at most 1 MiB of bits (`BloomFilter.exportChunks`' body), its header saying `items`. */
export async function* snapshotChunks<Sync extends boolean>(store: BitStore<Sync>, parameters: FilterParameters, items: number): AsyncIterableIterator<Uint8Array> {
  yield encodeSnapshotHeader({ parameters, items })
  let crc = 0
  for (const { shard, offset, length } of shardRanges(parameters)) {
    // Copied: a store may hand out a view of its live bits (the memory store does), and adds made
    // while the consumer still holds a chunk must not change it after its checksum was taken.
    const bytes = (await store.readShard(shard, offset, length)).slice()
    crc = crc32(bytes, crc)
    yield bytes
  }
  yield trailer(crc)
}
