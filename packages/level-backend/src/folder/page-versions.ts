import type { Database } from './database.js'
import { dataLost } from '../errors.js'
import { decodeVersions, encodeVersions, parseVersionsKey, VERSIONS_RANGE, versionsKey } from './records.js'

/** Pages per page-version record: 16 KiB of versions. */
export const CHUNK_PAGES = 4096

/**
 * Every page's version: how a read tells a page LevelDB lost from one never written.
 *
 * Each write of a page stores it with its version plus one. The table is stored, in chunks, in the
 * same batch as each checkpoint's deletion of the log (and the chunks go after the pages they
 * describe), so a page that is missing, or older than its stored version, is one whose later write
 * LevelDB lost while it kept the deletion of the log records that write had folded in: those bits
 * are gone. Pages written after the last checkpoint may be newer than the table, never older.
 */
export class PageVersions {
  /** Page → version; 0 for a page never written (absent, all zero). */
  readonly table: Uint32Array
  /** Chunk → 1 when it changed since it was last stored. */
  private readonly changed: Uint8Array

  constructor(pages: number) {
    this.table = new Uint32Array(pages)
    this.changed = new Uint8Array(Math.ceil(pages / CHUNK_PAGES))
  }

  /** Reads the stored table (chunks never stored stay 0). */
  async load(location: string, db: Database): Promise<void> {
    for await (const [key, value] of db.iterator(VERSIONS_RANGE)) {
      const chunk = parseVersionsKey(key)
      if (chunk >= this.changed.length) continue
      const at = chunk * CHUNK_PAGES
      decodeVersions(location, chunk, Math.min(CHUNK_PAGES, this.table.length - at), value, this.table, at)
    }
  }

  /** The version to store a page with now (one more than any it had), and remembers it. */
  next(page: number): number {
    const version = (this.table[page] + 1) >>> 0 || 1
    this.table[page] = version
    this.changed[(page / CHUNK_PAGES) | 0] = 1
    return version
  }

  /**
   * Checks a page read from LevelDB (`stored` undefined when absent) against its version, and
   * takes on a newer one (written after the last checkpoint).
   * @throws BloomError `BLOOM_DATA_LOST` naming the page.
   */
  check(location: string, page: number, shard: number, index: number, stored: number | undefined): void {
    const expected = this.table[page]
    if (expected === 0) {
      if (stored !== undefined) this.table[page] = stored
      return
    }
    if (stored === undefined) {
      throw dataLost(location, `page ${index} of shard ${shard} is missing, but version ${expected} of it was written (LevelDB lost it: a damaged, truncated or deleted file)`)
    }
    // Versions wrap at 2^32: "at or after" is a difference below 2^31.
    const ahead = (stored - expected) >>> 0
    if (ahead >= 2 ** 31) {
      throw dataLost(location, `page ${index} of shard ${shard} is version ${stored}, but version ${expected} of it was written (LevelDB lost the newer one: a damaged, truncated or deleted file)`)
    }
    this.table[page] = stored
  }

  /**
   * Takes on the version a log record says a page was written at (a counting store's log, replayed
   * at open), unless the table already holds it or a newer one; stored at the next checkpoint.
   */
  record(page: number, version: number): void {
    if (((version - this.table[page]) >>> 0) >= 2 ** 31 || version === this.table[page]) return
    this.table[page] = version
    this.changed[(page / CHUNK_PAGES) | 0] = 1
  }

  /** Puts back a page's version after the write that took {@link next} failed (nothing of it was stored). */
  revert(page: number, version: number): void {
    this.table[page] = version
  }

  /** Puts of the chunks changed since the last call, for a checkpoint's last batch. */
  takeChanges(): { type: 'put'; key: string; value: Uint8Array }[] {
    const ops: { type: 'put'; key: string; value: Uint8Array }[] = []
    for (let chunk = 0; chunk < this.changed.length; chunk++) {
      if (this.changed[chunk] === 0) continue
      const at = chunk * CHUNK_PAGES
      ops.push({ type: 'put', key: versionsKey(chunk), value: encodeVersions(this.table.subarray(at, Math.min(at + CHUNK_PAGES, this.table.length))) })
      this.changed[chunk] = 0
    }
    return ops
  }

  /** Marks every chunk changed again (a checkpoint's last batch failed: its chunks must be written by the next). */
  restore(ops: readonly { key: string }[]): void {
    for (const { key } of ops) this.changed[parseVersionsKey(key)] = 1
  }

  /** Forgets every version (the pages were deleted); the caller deletes the stored chunks in the same batch. */
  reset(): void {
    this.table.fill(0)
    this.changed.fill(0)
  }
}
