/**
 * The snapshot header and its parameter fields, for a backend or tool that writes or checks a
 * snapshot (or a store's own metadata) field by field. Grouped under `snapshotFormat` in
 * `@bloomkit/core/store`; docs/SPEC.md defines the bytes.
 */
export {
  decodeSnapshotHeader,
  encodeSnapshotHeader,
  readParameterFields,
  SNAPSHOT_HEADER_BYTES,
  writeParameterFields,
} from '../format/snapshot.js'
export { COUNTING_SNAPSHOT_VERSION } from '../format/versions.js'
export { encodeCountingHeader } from '../format/counting-snapshot.js'
