import { BloomError, type FilterParameters } from '@bloomkit/core'
import { adoptsStored, formatParameters, seedNote } from '@bloomkit/core/store'
import { ANCHOR_FILE, newAnchor, type SequenceAnchor } from './sequence-anchor.js'
import { closeDatabase, type Database } from './database.js'
import { corruptStore, dataLost, storeError } from '../errors.js'
import { encodeMetadata, type Metadata } from './metadata.js'
import type { PageVersions } from './page-versions.js'
import { CHECKPOINT_KEY, COUNTS_KEY, decodeCheckpoint, encodeCheckpoint, encodeCounts, META_KEY } from './records.js'
import type { LoggedRecord } from './write-ahead-log.js'

/**
 * What opening a filter's folder takes besides the store itself: a new filter's first records,
 * create's check of a filter already there, and the replay of the log a crash left. Plain
 * (LevelBitStore) and counting (LevelCounterStore) folders share it.
 */

/** What a store is built from: the open database, its metadata, and (in Node) the folder's anchor. */
export interface Opened {
  readonly meta: Metadata
  readonly anchor: SequenceAnchor | undefined
}

/** Writes a new filter's records into an empty database; its sequence starts at 1 (0 is "nothing written yet"). */
export async function initializeFolder(where: string, db: Database, meta: Metadata): Promise<Opened> {
  // A new filter's counts are known (all zero) and kept from here on.
  const anchor = await writeFirstRecords(where, db, [
    { type: 'put', key: META_KEY, value: encodeMetadata(meta) },
    { type: 'put', key: COUNTS_KEY, value: encodeCounts(new Float64Array(meta.parameters.shards)) },
  ])
  return { meta, anchor }
}

/**
 * Makes the folder's anchor and writes a new filter's `records` with the checkpoint record (the
 * log starts at 1) in one fsynced batch. Returns the anchor (undefined in browsers).
 * @throws BloomError `BLOOM_DATA_LOST` when the anchor says the folder held a filter LevelDB lost.
 */
export async function writeFirstRecords(where: string, db: Database, records: readonly { type: 'put'; key: string; value: Uint8Array }[]): Promise<SequenceAnchor | undefined> {
  const anchor = newAnchor(where, { create: true })
  try {
    await db.batch([...records, { type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint(1) }], { sync: true })
  } catch (error) {
    anchor?.close()
    throw error
  }
  return anchor
}

/**
 * Whether `create` may open the filter stored in `where`.
 * @throws BloomError `BLOOM_INCOMPATIBLE` when it has other parameters.
 */
export function checkAdoptable(where: string, wanted: Parameters<typeof adoptsStored>[0], stored: FilterParameters): void {
  const checked = wanted.parameters
  // Every field, layout included (the shared comparison is the one merge and import use); the
  // seed too unless the caller left it to chance (`seeded` false): then the stored one is kept.
  if (!adoptsStored(wanted, stored)) {
    throw new BloomError(
      'BLOOM_INCOMPATIBLE',
      `${where} already holds a filter with other parameters: ${formatParameters(stored)}` +
        ` (asked for ${formatParameters(checked)}${seedNote(stored, checked, { seeded: wanted.seeded })}); open it, or use another folder`,
    )
  }
}

/**
 * Checks that LevelDB lost nothing this filter wrote and applies (in order) the log records a
 * crash left behind: `records` reads them (a plain store's keys, a counting store's pages), lazily,
 * after the checkpoint record and the stored page versions are read. Resolves to where the log
 * starts, the next sequence number and the log's bytes.
 * @throws BloomError `BLOOM_DATA_LOST` when the log has a gap or ends before the anchor;
 *   `BLOOM_CORRUPT_STORE` for a damaged record.
 */
export async function replayLog<R extends LoggedRecord>({ location, db, versions, anchor, records, apply }: {
  readonly location: string
  readonly db: Database
  readonly versions: PageVersions
  readonly anchor: SequenceAnchor | undefined
  /** The log's records, in sequence order. */
  readonly records: AsyncIterable<R>
  /** Sets a replayed record's bits (or counters). */
  readonly apply: (record: R) => unknown
}): Promise<{ logStart: number; next: number; logBytes: number }> {
  const checkpoint = await db.get(CHECKPOINT_KEY)
  if (checkpoint === undefined) throw dataLost(location, 'its checkpoint record is missing (LevelDB lost it: a damaged, truncated or deleted file)')
  const logStart = decodeCheckpoint(location, checkpoint)
  await versions.load(location, db)
  let next = logStart
  let logBytes = 0
  for await (const record of records) {
    const { seq, bytes } = record
    if (seq < next) throw corruptStore(location, `log record ${seq} precedes the log's start ${next}`)
    if (seq > next) {
      const which = seq - 1 === next ? `log record ${next} is` : `log records ${next} to ${seq - 1} are`
      throw dataLost(location, `${which} missing (LevelDB dropped it: a damaged file)`)
    }
    await apply(record)
    next = seq + 1
    logBytes += bytes
  }
  if (anchor !== undefined && anchor.recorded > next) {
    throw dataLost(
      location,
      `its records end at sequence ${next}, but its anchor file (${ANCHOR_FILE}) says writes reached ${anchor.recorded}: ` +
        'LevelDB lost its newest writes (a damaged, truncated or deleted .log file, or a power loss without `sync: true`)',
    )
  }
  return { logStart, next, logBytes }
}

/**
 * Opens a store over a database that `prepare` makes ready (its metadata and anchor): `build`
 * makes the store and replays its log. On any failure the anchor and the database are closed and
 * the error is the store's, saying what the folder `doing` (e.g. "cannot be opened"). Plain and
 * counting folders both open through it.
 */
export async function adoptFolder<S>(where: string, db: Database, doing: string, prepare: () => Promise<Opened>, build: (opened: Opened) => Promise<S>): Promise<S> {
  let anchor: SequenceAnchor | undefined
  try {
    const opened = await prepare()
    anchor = opened.anchor
    return await build(opened)
  } catch (error) {
    anchor?.close()
    await closeDatabase(where, db).catch(() => {})
    throw storeError(where, doing, error)
  }
}
