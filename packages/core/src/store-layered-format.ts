/**
 * A layered snapshot read and written as a whole, and its layers handed to a backend's storage.
 * Grouped under `layeredFormat` in `@bloomkit/core/store`; docs/SPEC.md defines the bytes.
 */
export { decodeLayeredSnapshot, encodeLayeredSnapshot, LAYERED_SNAPSHOT_VERSION, snapshotVersionOf } from './layered-snapshot.js'
export { layerSnapshotOf, snapshotLayerEntries } from './layer-storage.js'
