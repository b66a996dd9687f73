/**
 * The snapshot header and its parameter fields, for a backend or tool that writes or checks a
 * snapshot (or a store's own metadata) field by field. Grouped under `snapshotFormat` in
 * `@bloomkit/core/store`; docs/SPEC.md defines the bytes.
 */
export {
  COUNTING_SNAPSHOT_VERSION,
  decodeSnapshotHeader,
  encodeSnapshotHeader,
  readParameterFields,
  SNAPSHOT_HEADER_BYTES,
  writeParameterFields,
} from './snapshot.js'
export { encodeCountingHeader } from './counting-bloom-filter.js'
