import { BloomError } from '@bloomkit/core'
import { closeDatabase, openDatabase, type Database } from './database.js'
import { storeError } from '../errors.js'
import { COUNTING_METADATA, decodeMetadata, readMetadata, type Metadata } from './metadata.js'
import { COUNTING_META_KEY, META_KEY } from './records.js'
import { newAnchor } from './sequence-anchor.js'

/** Which kind of filter a folder holds: a fixed one, a layered one (growth or window) or a counting one. */
export type StoredKind = 'fixed' | 'layered' | 'counting'

/**
 * A filter's folder opened once, with the kind its records say: a fixed or counting filter's own
 * database and its metadata, or a layered filter's manifest database (`<folder>/manifest`; its
 * layers are folders of their own). The database stays open for the filter built from it.
 */
export type StoredFolder = (FilterDatabase & { readonly kind: 'fixed' | 'counting' }) | { readonly kind: 'layered'; readonly where: string; readonly db: Database }

/** A fixed or counting filter's database, open, and its metadata record, read. */
export interface FilterDatabase {
  readonly where: string
  readonly db: Database
  readonly meta: Metadata
}

/** The path of a layered filter's manifest database in its folder. */
export const manifestLocation = (where: string): string => `${where}/manifest`

/**
 * Opens the filter in `where` (canonical) once and reads which kind it is, so that an open of "any
 * kind" opens the folder it finds, not one kind after another. A fixed or counting filter's folder is
 * one LevelDB database, told apart by its metadata record (`meta` or `counting`); a layered filter's
 * folder is not a database itself (in browsers an empty one) but holds its manifest's.
 * @throws BloomError `BLOOM_NOT_FOUND`, `BLOOM_CORRUPT_STORE` (another application's data, an
 *   unfinished import, a damaged record), `BLOOM_UNSUPPORTED_VERSION` (a later folder format),
 *   `BLOOM_DATA_LOST` (the anchor says the folder held records LevelDB lost), `BLOOM_LOCKED`,
 *   `BLOOM_STORE_UNAVAILABLE`: as the open of that kind of filter says them.
 */
export async function openStoredFolder(where: string): Promise<StoredFolder> {
  let db: Database
  try {
    db = await openDatabase(where, { create: false })
  } catch (error) {
    // In Node a layered filter's folder is refused before LevelDB opens it: it is not a database.
    return openManifest(where, error)
  }
  let found: StoredFolder | undefined
  try {
    found = await readFilterRecord(where, db)
    // No record and no other data: LevelDB lost every record (the anchor says so), or no filter is here.
    if (found === undefined) newAnchor(where, { create: false })
  } catch (error) {
    await closeDatabase(where, db).catch(() => {})
    throw storeError(where, 'cannot be opened', error)
  }
  if (found !== undefined) return found
  await closeDatabase(where, db)
  // In browsers, the empty database IndexedDB made under a layered filter's name.
  return openManifest(where, new BloomError('BLOOM_NOT_FOUND', `${where}: no bloomkit filter here (the database is empty)`))
}

/** Closes the database an {@link openStoredFolder} left open (when the kind found is refused). */
export function closeStoredFolder(folder: StoredFolder): Promise<void> {
  return closeDatabase(folder.kind === 'layered' ? manifestLocation(folder.where) : folder.where, folder.db)
}

/**
 * The metadata record of a fixed or a counting filter; undefined for an empty database.
 * @throws BloomError `BLOOM_CORRUPT_STORE` for a damaged record, an unfinished import or other data,
 *   `BLOOM_UNSUPPORTED_VERSION` for a later format.
 */
async function readFilterRecord(where: string, db: Database): Promise<StoredFolder | undefined> {
  const plain = await db.get(META_KEY)
  if (plain !== undefined) return { kind: 'fixed', where, db, meta: decodeMetadata(where, plain) }
  const counting = await db.get(COUNTING_META_KEY)
  if (counting !== undefined) return { kind: 'counting', where, db, meta: decodeMetadata(where, counting, COUNTING_METADATA) }
  await readMetadata(where, db, { required: false })
  return undefined
}

/**
 * A layered filter's manifest database in `where`, or `notHere` (what opening `where` itself
 * said) when there is none: the folder's own error is the one that names what is there.
 */
async function openManifest(where: string, notHere: unknown): Promise<StoredFolder> {
  if (!(notHere instanceof BloomError) || (notHere.code !== 'BLOOM_NOT_FOUND' && notHere.code !== 'BLOOM_CORRUPT_STORE')) throw notHere
  const manifest = manifestLocation(where)
  let db: Database
  try {
    db = await openDatabase(manifest, { create: false })
  } catch (error) {
    // A manifest another open holds says so; any other failure means no manifest here: the folder's error.
    if (error instanceof BloomError && error.code === 'BLOOM_LOCKED') throw error
    throw notHere
  }
  let empty = true
  try {
    for await (const _ of db.keys({ limit: 1 })) empty = false
  } catch (error) {
    await closeDatabase(manifest, db).catch(() => {})
    throw storeError(manifest, 'cannot be opened', error)
  }
  if (!empty) return { kind: 'layered', where, db }
  // Nothing listed: in browsers, the database IndexedDB made by opening a name that holds nothing; in
  // Node, a create a crash cut short before its manifest was written.
  await closeDatabase(manifest, db)
  throw new BloomError('BLOOM_NOT_FOUND', `${where}: no bloomkit filter here (${notHere.code === 'BLOOM_NOT_FOUND' ? 'the database is empty' : 'its layered manifest is empty'})`)
}
