/**
 * A snapshot given as bytes or as a stream of chunks: read in chunks, read whole, have its
 * version looked at first, or read by a SnapshotReader that checks a whole one's length first.
 * Grouped under `snapshotSources` in `@bloomkit/core/store`.
 */
export { snapshotChunks } from '../format/chunks.js'
export { peekKind, peekVersion, snapshotReader, wholeSnapshot } from '../format/snapshot-source.js'
