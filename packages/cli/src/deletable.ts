import { existsSync, readdirSync, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { BloomError } from '@bloomkit/core'
import { layeredFormat } from '@bloomkit/core/store'
import { levelBackend } from './backends.js'
import { CliError } from './errors.js'
import { formatBytes } from './progress.js'
import { folderNotFile } from './stores.js'

const { snapshotVersionOf } = layeredFormat

/**
 * What `bloomkit delete` recognises as a filter before it deletes anything, and how it names
 * anything else: a key list, a text file or someone else's database given by mistake is refused
 * with `CLI_TARGET` saying what it is, and left as it was. (Redis filters are recognised by the
 * library's `RedisBloomFilter.destroy`, which reads their meta hash.)
 */

/** Bytes read from the start of a file to tell what it is. */
const SNIFF_BYTES = 64 << 10

/** The first bytes of a file (at most {@link SNIFF_BYTES}) and its size. */
async function headOf(path: string): Promise<{ head: Uint8Array; size: number }> {
  const handle = await open(path, 'r')
  try {
    const size = (await handle.stat()).size
    const head = new Uint8Array(Math.min(size, SNIFF_BYTES))
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    return { head: head.subarray(0, bytesRead), size }
  } finally {
    await handle.close()
  }
}

/** "an empty file", "a text file of 24.0 MiB", "a gzip file of …", "a binary file of …", for messages. */
function describeFile(head: Uint8Array, size: number): string {
  if (size === 0) return 'an empty file'
  const bytes = size < 1024 ? `${size} byte(s)` : formatBytes(size)
  if (head[0] === 0x1f && head[1] === 0x8b) return `a gzip file of ${bytes}`
  if (!head.includes(0)) {
    try {
      // `stream` lets a character cut at the end of the sample pass; a byte that is not UTF-8 throws.
      new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true })
      return `a text file of ${bytes}`
    } catch {
      // not text
    }
  }
  const first = Array.from(head.subarray(0, 4), (byte) => byte.toString(16).padStart(2, '0')).join(' ')
  return `a binary file of ${bytes} (starting ${first})`
}

/** Whether the file starts as every bloomkit snapshot does ("BLMK" and a version: plain, layered, counting, or a later one). */
function isSnapshot(head: Uint8Array): boolean {
  return snapshotVersionOf(head) !== undefined
}

/**
 * Whether `path` holds a snapshot file that `delete` may remove: true for a bloomkit snapshot
 * (a damaged one too: deleting is how it is cleared), false when there is nothing there.
 * @throws CliError `CLI_TARGET` for a folder, or a file that is not a bloomkit snapshot, named by what it is.
 */
export async function deletableFile(path: string): Promise<boolean> {
  if (!existsSync(path)) return false
  const stat = statSync(path)
  if (stat.isDirectory()) throw folderNotFile(path)
  // A pipe or device would block the read below, and is no snapshot anyway.
  if (!stat.isFile()) throw new CliError('CLI_TARGET', `"${path}" is not a regular file (a pipe, socket or device), not a bloomkit snapshot; not deleting it`)
  const { head, size } = await headOf(path)
  if (isSnapshot(head)) return true
  throw new CliError('CLI_TARGET', `"${path}" is ${describeFile(head, size)}, not a bloomkit snapshot (those start with "BLMK"); not deleting it`)
}

/**
 * Codes with which a folder fails to open that only a bloomkit filter's folder can give: its
 * records are there but pages or log are gone (`BLOOM_DATA_LOST`), or another release wrote it
 * (`BLOOM_UNSUPPORTED_VERSION`). `BLOOM_CORRUPT_STORE` is not among them: a LevelDB of other data
 * gives it too.
 */
const BLOOMKIT_ONLY_FAILURES = new Set(['BLOOM_DATA_LOST', 'BLOOM_UNSUPPORTED_VERSION'])

/** The file only bloomkit writes into a filter's LevelDB folder (the level backend's README: "BLOOMKIT-ANCHOR"). */
const ANCHOR_FILE = 'BLOOMKIT-ANCHOR'

/**
 * Whether `folder` holds a LevelDB filter that `delete` may remove: true for a folder that opens
 * as a bloomkit filter of any kind, or a damaged one (it fails as only a filter's folder can, see
 * {@link BLOOMKIT_ONLY_FAILURES}, or holds bloomkit's anchor file): deleting is how those are
 * cleared. False when there is nothing there.
 * @throws BloomError `BLOOM_LOCKED` when another process has it open; CliError `CLI_TARGET` for a
 *   file, a folder that is not a LevelDB folder, or a LevelDB that is not a bloomkit filter, named
 *   by what it is (the library's reason as the cause).
 */
export async function deletableLevel(folder: string): Promise<boolean> {
  if (!existsSync(folder)) return false
  const refuse = (what: string, cause?: unknown) => new CliError('CLI_TARGET', `level:${folder} ${what}; not deleting it`, cause === undefined ? undefined : { cause })
  const stat = statSync(folder)
  if (!stat.isDirectory()) {
    if (!stat.isFile()) throw refuse('is not a folder (a pipe, socket or device)')
    const { head, size } = await headOf(folder)
    throw refuse(isSnapshot(head) ? `is a bloomkit snapshot file, not a folder (delete it as ${folder}, without level:)` : `is ${describeFile(head, size)}, not a folder`)
  }
  // A fixed or counting filter's folder is one LevelDB; a layered one's holds its list in the LevelDB `manifest` (the backend's README).
  if (!existsSync(join(folder, 'CURRENT')) && !existsSync(join(folder, 'manifest', 'CURRENT'))) {
    const entries = readdirSync(folder)
    const what = entries.length === 0 ? 'an empty folder' : `a folder of ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`
    throw refuse(`is ${what}, not a LevelDB folder (it has no CURRENT file, nor a layered filter's manifest)`)
  }
  const { LevelBloomFilter } = await levelBackend()
  try {
    await (await LevelBloomFilter.open(folder)).close()
    return true
  } catch (error) {
    if (!(error instanceof BloomError) || error.code === 'BLOOM_LOCKED') throw error
    if (BLOOMKIT_ONLY_FAILURES.has(error.code) || existsSync(join(folder, ANCHOR_FILE))) return true
    throw refuse('is a LevelDB folder that does not open as a bloomkit filter (remove it yourself if it is one you mean to delete)', error)
  }
}
