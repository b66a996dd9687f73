/**
 * A layered snapshot read and written as a whole, and its layers handed to a backend's storage.
 * Grouped under `layeredFormat` in `@bloomkit/core/store`; docs/SPEC.md defines the bytes.
 */
export { decodeLayeredSnapshot, encodeLayeredSnapshot, snapshotVersionOf } from '../format/layered-snapshot.js'
export { LAYERED_SNAPSHOT_VERSION } from '../format/versions.js'
export { layerSnapshotOf, snapshotLayerEntries } from '../layered/layer-storage.js'
