import { crc32 } from '@bloomkit/core/store'
import { nodeModules, type NodeFs } from './database.js'
import { corruptStore, dataLost } from '../errors.js'

/** The anchor's file name in the filter's folder (LevelDB ignores files it did not name). */
export const ANCHOR_FILE = 'BLOOMKIT-ANCHOR'
const MAGIC = 0x4e414b42 // "BKAN" read little-endian
const BYTES = 16

/**
 * How far the filter's sequence got, kept in a file beside LevelDB's, outside LevelDB.
 *
 * LevelDB keeps its newest writes in its `.log` file; when that file is deleted, cut short or
 * damaged, it opens without them and without an error, and what is left looks like a valid, older
 * filter. Every resolved add has a sequence number (its log record's), so the anchor records the
 * next one after each write resolved; a folder whose records end before the anchor lost writes.
 * The anchor is written after the LevelDB write it follows, so a crash of the process leaves it at
 * or behind LevelDB, never ahead. It is fsynced at checkpoints; after a power loss without `sync`,
 * an anchor ahead of LevelDB's log is real loss, and reported as such.
 *
 * Node only: in browsers IndexedDB has no files to damage or delete one by one, and there is no
 * folder to keep the anchor in.
 */
export class SequenceAnchor {
  private readonly buffer = new Uint8Array(BYTES)
  private readonly view = new DataView(this.buffer.buffer)

  private constructor(
    private readonly fs: NodeFs,
    private fd: number | undefined,
    /** The sequence recorded so far. */
    private value: number,
  ) {}

  /**
   * The anchor of a filter's folder: `undefined` where there are no files (browsers); `missing`
   * when the folder has none. Opening with `create` makes one (recording 0) when it is missing.
   * @throws BloomError `BLOOM_CORRUPT_STORE` when the file is damaged.
   */
  static open(location: string, { create }: { readonly create: boolean }): SequenceAnchor | 'missing' | undefined {
    const node = nodeModules()
    if (node === undefined) return undefined
    const path = node.path.join(location, ANCHOR_FILE)
    const exists = node.fs.statSync(path, { throwIfNoEntry: false }) !== undefined
    if (!exists && !create) return 'missing'
    const fd = node.fs.openSync(path, exists ? 'r+' : 'w+')
    const anchor = new SequenceAnchor(node.fs, fd, 0)
    try {
      if (exists) anchor.value = anchor.read(location, path)
      else anchor.write(0, { durable: true })
      return anchor
    } catch (error) {
      anchor.close()
      throw error
    }
  }

  /** The next sequence number the filter had reached, as recorded. */
  get recorded(): number {
    return this.value
  }

  /** Records that the filter's records reach `next` (no-op unless it is further); fsyncs with `durable`. */
  advance(next: number, { durable = false }: { readonly durable?: boolean } = {}): void {
    if (next > this.value) this.write(next, { durable })
    else if (durable && this.fd !== undefined) this.fs.fdatasyncSync(this.fd)
  }

  close(): void {
    if (this.fd === undefined) return
    const fd = this.fd
    this.fd = undefined
    this.fs.closeSync(fd)
  }

  private read(location: string, path: string): number {
    const n = this.fs.readSync(this.fd!, this.buffer, 0, BYTES, 0)
    // Empty: a crash came between making the file and its first write, before any record existed.
    if (n === 0) return 0
    const value = this.view.getFloat64(4, true)
    if (n !== BYTES || this.view.getUint32(0, true) !== MAGIC || this.view.getUint32(12, true) !== crc32(this.buffer.subarray(0, 12)) || !Number.isSafeInteger(value) || value < 0) {
      throw corruptStore(location, `its anchor file ${path} is damaged (${n} bytes)`)
    }
    return value
  }

  private write(next: number, { durable }: { readonly durable: boolean }): void {
    if (this.fd === undefined) return
    this.view.setUint32(0, MAGIC, true)
    this.view.setFloat64(4, next, true)
    this.view.setUint32(12, crc32(this.buffer.subarray(0, 12)), true)
    // One write of 16 bytes at offset 0: within one disk sector, so it lands whole or not at all.
    this.fs.writeSync(this.fd, this.buffer, 0, BYTES, 0)
    if (durable) this.fs.fdatasyncSync(this.fd)
    this.value = next
  }
}

/**
 * A new filter's anchor (recording 0; with `create`, made if missing; without, only checked and
 * closed). Throws when the folder holds no filter's records but its anchor says it had some:
 * LevelDB then lost every record (a deleted or damaged .log holding them all), which must not pass
 * for "no filter here".
 * @throws BloomError `BLOOM_DATA_LOST`.
 */
export function newAnchor(where: string, { create }: { readonly create: boolean }): SequenceAnchor | undefined {
  const anchor = SequenceAnchor.open(where, { create })
  if (!(anchor instanceof SequenceAnchor)) return undefined
  if (anchor.recorded > 0) {
    anchor.close()
    throw dataLost(where, `LevelDB holds none of its records, but its anchor file (${ANCHOR_FILE}) says writes reached sequence ${anchor.recorded} (a deleted or damaged .log file)`)
  }
  if (create) return anchor
  anchor.close()
  return undefined
}

/**
 * The anchor of a folder holding a filter; in Node it must be there.
 * @throws BloomError `BLOOM_CORRUPT_STORE` when it is missing or damaged.
 */
export function existingAnchor(where: string): SequenceAnchor | undefined {
  const anchor = SequenceAnchor.open(where, { create: false })
  if (anchor === 'missing') {
    throw corruptStore(where, `its anchor file ${ANCHOR_FILE} is missing (the folder was copied in part, or the file was deleted)`)
  }
  return anchor
}
