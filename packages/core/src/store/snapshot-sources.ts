/**
 * A snapshot given as bytes or as a stream of chunks: read in chunks, read whole, or have its
 * version looked at first. Grouped under `snapshotSources` in `@bloomkit/core/store`.
 */
export { snapshotChunks } from '../format/chunks.js'
export { peekKind, peekVersion, wholeSnapshot } from '../format/snapshot-source.js'
