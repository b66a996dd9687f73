import { BloomError, type FilterParameters } from '@bloomkit/core'
import type { PositionBatch } from '@bloomkit/core/store'
import type { Database } from './database.js'
import { CHECKPOINT_KEY, decodeLogRecord, decodePageLogRecord, encodeCheckpoint, LOG_RANGE, logKey, parseLogKey, type LogRecord, type PageLogRecord } from './records.js'

/**
 * The log: one record per `setBits` call, holding the keys it made new (a shard and k positions
 * each), so that a resolved add costs one small write. A checkpoint folds the records into pages
 * and deletes them; `open` replays what a crash left.
 */

/** The shards and positions of the keys `out` marks new, for a log record. */
export function newKeys(batch: PositionBatch, out: Uint8Array, added: number): [Uint32Array, Uint32Array] {
  const { size, hashes } = batch
  if (added === size) return [batch.shards.subarray(0, size), batch.positions.subarray(0, size * hashes)]
  const shards = new Uint32Array(added)
  const positions = new Uint32Array(added * hashes)
  for (let i = 0, n = 0, p = 0; i < size; i++) {
    if (out[i] === 0) continue
    shards[n++] = batch.shards[i]
    for (let from = i * hashes, end = from + hashes; from < end; from++) positions[p++] = batch.positions[from]
  }
  return [shards, positions]
}

/** Where a stored log record sits in the log: its sequence number and its stored size. */
export interface LoggedRecord {
  readonly seq: number
  /** Bytes of the stored record. */
  readonly bytes: number
}

/** One stored log record, checked, as a batch to set again. */
export interface LoggedBatch extends LoggedRecord {
  readonly batch: PositionBatch
}

/** One stored counting log record, checked: the pages a batch wrote and their versions. */
export interface LoggedPages extends LoggedRecord {
  readonly record: PageLogRecord
}

/**
 * The log records in the database, in order, each checked against its CRC and the filter.
 * @throws BloomError `BLOOM_CORRUPT_STORE` naming the record.
 */
export async function* readLog(location: string, db: Database, parameters: FilterParameters, shardBytes: number): AsyncGenerator<LoggedBatch> {
  for await (const [key, value] of db.iterator(LOG_RANGE)) {
    const seq = parseLogKey(key)
    const record = decodeLogRecord(location, seq, value)
    checkLogRecord(location, seq, record, parameters, shardBytes)
    const batch = { size: record.count, hashes: record.hashes, shards: record.shards, positions: record.positions } as PositionBatch
    yield { seq, batch, bytes: value.length }
  }
}

/** A record that passed its CRC but does not fit this filter would index outside the pages: refuse it. */
function checkLogRecord(location: string, seq: number, record: LogRecord, parameters: FilterParameters, shardBytes: number): void {
  const { hashes, shards } = parameters
  const shardBits = shardBytes * 8
  const bad = (why: string) => new BloomError('BLOOM_CORRUPT_STORE', `${location}: log record ${seq} ${why}`)
  if (record.hashes !== hashes) throw bad(`has ${record.hashes} hashes per key, the filter ${hashes}`)
  for (let i = 0; i < record.count; i++) if (record.shards[i] >= shards) throw bad(`names shard ${record.shards[i]} of ${shards}`)
  for (let i = 0; i < record.positions.length; i++) if (record.positions[i] >= shardBits) throw bad(`names bit ${record.positions[i]} of ${shardBits}`)
}

/**
 * A counting store's log records, in order, each checked against its CRC and the filter's `pages`.
 * @throws BloomError `BLOOM_CORRUPT_STORE` naming the record.
 */
export async function* readPageLog(location: string, db: Database, pages: number): AsyncGenerator<LoggedPages> {
  for await (const [key, value] of db.iterator(LOG_RANGE)) {
    const seq = parseLogKey(key)
    const record = decodePageLogRecord(location, seq, value)
    for (const page of record.pages) {
      if (page >= pages) throw new BloomError('BLOOM_CORRUPT_STORE', `${location}: log record ${seq} names page ${page} of ${pages}`)
    }
    yield { seq, record, bytes: value.length }
  }
}

/**
 * The log's part of a checkpoint's last batch: deleting records `firstSeq` … `nextSeq − 1` (folded
 * in) and, when the log's start moved from `storedLogStart`, the checkpoint record saying it starts
 * at `nextSeq`. The store adds what it stores with them (page versions, counts).
 */
export function checkpointOps(firstSeq: number, nextSeq: number, storedLogStart: number): ({ type: 'del'; key: string } | { type: 'put'; key: string; value: Uint8Array })[] {
  const ops: ({ type: 'del'; key: string } | { type: 'put'; key: string; value: Uint8Array })[] = []
  for (let seq = firstSeq; seq < nextSeq; seq++) ops.push({ type: 'del', key: logKey(seq) })
  if (nextSeq !== storedLogStart) ops.push({ type: 'put', key: CHECKPOINT_KEY, value: encodeCheckpoint(nextSeq) })
  return ops
}
