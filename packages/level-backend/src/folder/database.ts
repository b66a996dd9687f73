import { Level } from 'level'
import { BloomError } from '@bloomkit/core'
import { storeError } from '../errors.js'

/** A LevelDB database (IndexedDB in browsers) with string keys and byte values. */
export type Database = Level<string, Uint8Array>

/** Locations this process holds open. LevelDB drops a process's lock when a second open of the
 * same folder fails in that process (shared/NOTES.md), so a second open must never reach LevelDB. */
const openHere = new Set<string>()

/** The part of Node's fs this package uses. */
export interface NodeFs {
  statSync(path: string, options: { throwIfNoEntry: false }): { isDirectory(): boolean } | undefined
  readdirSync(path: string): string[]
  rmSync(path: string, options: { recursive: boolean; force: boolean }): void
  rmdirSync(path: string): void
  renameSync(from: string, to: string): void
  openSync(path: string, flags: string): number
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number
  fdatasyncSync(fd: number): void
  closeSync(fd: number): void
}
interface NodePath {
  resolve(...paths: string[]): string
  join(...paths: string[]): string
  basename(path: string): string
}

/** Node's fs and path where they exist (Node, Deno, Bun); undefined in browsers, without a static import. */
export function nodeModules(): { fs: NodeFs; path: NodePath } | undefined {
  const get = (globalThis as { process?: { getBuiltinModule?: (name: string) => unknown } }).process?.getBuiltinModule
  if (typeof get !== 'function') return undefined
  return { fs: get('node:fs') as NodeFs, path: get('node:path') as NodePath }
}

/** The canonical form of a location: an absolute path in Node, the name as given in browsers. */
export function canonicalLocation(location: string): string {
  if (typeof location !== 'string' || location.length === 0) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `location must be a non-empty string (a folder path, or an IndexedDB name in browsers); got ${String(location)}`)
  }
  return nodeModules()?.path.resolve(location) ?? location
}

/**
 * Files LevelDB writes (db/filename.cc) and this package's anchor. A folder holding only these but
 * no CURRENT yet is a database another process is creating right now, not another application's.
 */
const DATABASE_FILE = /^(CURRENT|LOCK|LOG|LOG\.old|MANIFEST-\d+|\d+\.(log|ldb|sst|dbtmp)|BLOOMKIT-ANCHOR)$/

/** What is at a location before LevelDB touches it (Node only; browsers report 'unknown'). */
function inspect(location: string): 'missing' | 'empty' | 'leveldb' | 'other' | 'unknown' {
  const node = nodeModules()
  if (node === undefined) return 'unknown'
  let stat: { isDirectory(): boolean } | undefined
  let entries: string[] = []
  try {
    stat = node.fs.statSync(location, { throwIfNoEntry: false })
    if (stat?.isDirectory()) entries = node.fs.readdirSync(location)
  } catch {
    // ENOTDIR, EACCES…: LevelDB meets the same error and reports it with its cause.
    return 'unknown'
  }
  if (stat === undefined) return 'missing'
  if (!stat.isDirectory()) return 'other'
  if (entries.length === 0) return 'empty'
  // Without CURRENT, LevelDB's own files mean another process is creating the database (it holds
  // the lock, so opening gives BLOOM_LOCKED, or finds the finished filter): not "not a LevelDB folder".
  return entries.includes('CURRENT') || entries.every((name) => DATABASE_FILE.test(name)) ? 'leveldb' : 'other'
}

/** Deletes a folder this package created (Node only; in browsers the database is emptied instead). */
export function removeLocation(location: string): void {
  nodeModules()?.fs.rmSync(location, { recursive: true, force: true })
}

/** Whether nothing exists at the location yet (always false in browsers, where we cannot tell). */
export function locationIsNew(location: string): boolean {
  const what = inspect(location)
  return what === 'missing' || what === 'empty'
}

/**
 * Opens the database at `location` (canonical). With `create`, a missing folder is created; a
 * folder with other files in it is refused before LevelDB writes anything there.
 *
 * @throws BloomError `BLOOM_LOCKED` (open in this or another process), `BLOOM_NOT_FOUND`,
 *   `BLOOM_CORRUPT_STORE` (not a LevelDB folder, or LevelDB reports corruption), or
 *   `BLOOM_STORE_UNAVAILABLE` with LevelDB's error as `cause`.
 */
export async function openDatabase(location: string, { create }: { readonly create: boolean }): Promise<Database> {
  if (openHere.has(location)) {
    throw new BloomError('BLOOM_LOCKED', `${location} is locked: it is already open in this process (close it first)`)
  }
  const what = inspect(location)
  if (!create && (what === 'missing' || what === 'empty')) throw new BloomError('BLOOM_NOT_FOUND', `${location}: no bloomkit filter here (the folder does not exist or is empty)`)
  if (what === 'other') throw new BloomError('BLOOM_CORRUPT_STORE', `${location} is not a bloomkit filter: it is not a LevelDB folder`)
  const db: Database = new Level<string, Uint8Array>(location, { valueEncoding: 'view' })
  openHere.add(location)
  try {
    await db.open({ createIfMissing: create })
  } catch (error) {
    openHere.delete(location)
    throw storeError(location, 'cannot be opened', error)
  }
  return db
}

/** Closes a database from {@link openDatabase} and releases its location. */
export async function closeDatabase(location: string, db: Database): Promise<void> {
  try {
    await db.close()
  } finally {
    openHere.delete(location)
  }
}
