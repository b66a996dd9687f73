import type { FilterParameters } from '@bloomkit/core'
import { shardBytesOf } from '@bloomkit/core/store'
import { pageKey } from '../folder/records.js'

/**
 * How a filter's shards are cut into pages. Pages are numbered across the filter,
 * `page = shard · pagesPerShard + index`, where `index` counts pages within the shard; the last
 * page of a shard may be short. (The bit layout inside a shard, classic or blocked, is core's.)
 * A counting filter's shards are its counters (`shardBytes`: four bits per position), cut the same way.
 */
export class PageGeometry {
  /** Bytes of bits per page, a power of two. */
  readonly pageBytes: number
  /** Bytes of one shard. */
  readonly shardBytes: number
  readonly pagesPerShard: number
  /** log2 of bits per page: `position >>> pageShift` is a bit's page within its shard. */
  readonly pageShift: number
  /** Pages of the whole filter. */
  readonly pages: number

  constructor(parameters: FilterParameters, pageBytes: number, { shardBytes = shardBytesOf(parameters) }: { readonly shardBytes?: number } = {}) {
    this.pageBytes = pageBytes
    this.shardBytes = shardBytes
    this.pagesPerShard = Math.ceil(this.shardBytes / pageBytes)
    this.pageShift = Math.log2(pageBytes * 8)
    this.pages = parameters.shards * this.pagesPerShard
  }

  /** The shard a page belongs to. */
  shardOf(page: number): number {
    return Math.floor(page / this.pagesPerShard)
  }

  /** Bytes of page `index` of a shard: the last page of a shard may be short. */
  pageLength(index: number): number {
    return Math.min(this.pageBytes, this.shardBytes - index * this.pageBytes)
  }

  /** The LevelDB key of a page. */
  keyOf(page: number): string {
    const shard = this.shardOf(page)
    return pageKey(shard, page - shard * this.pagesPerShard)
  }
}
