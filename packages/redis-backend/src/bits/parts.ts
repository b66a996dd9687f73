// How a batch's keys travel: a shard's keys as a range of an index list, chunks of at most so many
// keys, and what is done with them.

/** What a batch does with its keys' bits: `add` sets them (BITFIELD `SET`), `has` reads them. */
export type BitOperation = 'add' | 'has'

/** A shard's keys `keys[from … to)`. */
export interface Part {
  readonly shard: number
  readonly keys: Uint32Array
  readonly from: number
  readonly to: number
}

/** Says that a batch cannot go over the batch connections now: the caller takes the client's path. */
export const NO_CONNECTION = Symbol('no batch connection')

/** Splits parts into chunks of at most `size` keys, splitting a part only where it is larger. */
export function chunksOf(parts: readonly Part[], size: number): Part[][] {
  const chunks: Part[][] = []
  let chunk: Part[] = []
  let keys = 0
  for (const part of parts) {
    for (let from = part.from; from < part.to; ) {
      const take = Math.min(part.to - from, size - keys)
      chunk.push({ shard: part.shard, keys: part.keys, from, to: from + take })
      keys += take
      from += take
      if (keys === size) {
        chunks.push(chunk)
        chunk = []
        keys = 0
      }
    }
  }
  if (chunk.length > 0) chunks.push(chunk)
  return chunks
}
