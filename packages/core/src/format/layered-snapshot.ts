import { crc32 } from './crc32.js'
import { LAYERED_SNAPSHOT_VERSION, SNAPSHOT_MAGIC as MAGIC } from './versions.js'
import { BloomError } from '../errors.js'
import { checkParameters, HASH_SCHEMES, layoutOfScheme, type FilterParameters } from '../parameters.js'
import { decodeSnapshot, getUint64, setUint64, snapshotBytes, SNAPSHOT_HEADER_BYTES } from './snapshot.js'
import { checkErrorRate } from '../sizing.js'
import { layerPolicyOf, maxWindow, type LayerPolicy } from '../layered/layer-policy.js'

/** Bytes of a layered snapshot's header. */
export const LAYERED_HEADER_BYTES = 68
/** Bytes of the record before each layer's version-1 snapshot: window, count, CRC-32. */
export const LAYER_RECORD_BYTES = 20

const POLICY_CODES = { scalable: 1, rotating: 2 } as const

/** One layer as a layered snapshot holds it. */
export interface SnapshotLayer {
  /** The layer's time window (rotating), 0 for a scalable filter. */
  readonly window: number
  /** Keys added to the layer that were new. */
  readonly count: number
  /** The layer's parameters (from its version-1 snapshot). */
  readonly parameters: FilterParameters
  /** The layer's bits (a view of the snapshot's bytes, not a copy). */
  readonly payload: Uint8Array
}

/** A decoded layered snapshot: the policy, then the layers oldest first. */
export interface LayeredSnapshot {
  readonly policy: LayerPolicy
  readonly layers: readonly SnapshotLayer[]
}

/** The format version a snapshot declares (bytes 4–5), or undefined if it is not a bloomkit snapshot. */
export function snapshotVersionOf(bytes: Uint8Array): number | undefined {
  if (!(bytes instanceof Uint8Array) || bytes.length < 6) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, 6)
  return view.getUint32(0, true) === MAGIC ? view.getUint16(4, true) : undefined
}

/** The 68-byte header of a layered snapshot with `layers` layers. */
export function encodeLayeredHeader(policy: LayerPolicy, layers: number): Uint8Array {
  const bytes = new Uint8Array(LAYERED_HEADER_BYTES)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, MAGIC, true)
  view.setUint16(4, LAYERED_SNAPSHOT_VERSION, true)
  view.setUint8(6, POLICY_CODES[policy.kind])
  view.setUint8(7, policy.layout === undefined ? 0 : HASH_SCHEMES[policy.layout])
  view.setUint32(8, policy.seed, true)
  view.setUint32(12, policy.shards ?? 0, true)
  setUint64(view, 16, policy.capacity)
  view.setFloat64(24, policy.errorRate, true)
  view.setUint32(32, policy.growth, true)
  // A CRC-32 of bytes 0–35 where version 1 keeps its header CRC: a version-1 reader that checks it
  // before the version still reaches the version check, and refuses with BLOOM_UNSUPPORTED_VERSION.
  view.setUint32(36, crc32(bytes.subarray(0, 36)), true)
  view.setFloat64(40, policy.tightening, true)
  view.setUint32(48, policy.seconds, true)
  view.setUint32(52, policy.keep, true)
  view.setUint32(56, layers, true)
  view.setUint32(60, 0, true) // flags
  view.setUint32(64, crc32(bytes.subarray(0, 64)), true)
  return bytes
}

/** The 20-byte record that precedes a layer's version-1 snapshot. */
export function encodeLayerRecord(window: number, count: number): Uint8Array {
  const bytes = new Uint8Array(LAYER_RECORD_BYTES)
  const view = new DataView(bytes.buffer)
  setUint64(view, 0, window)
  setUint64(view, 8, Math.min(Math.max(0, Math.round(count)), Number.MAX_SAFE_INTEGER))
  view.setUint32(16, crc32(bytes.subarray(0, 16)), true)
  return bytes
}

/** Total bytes of a layered snapshot whose layers have these parameters. */
export function layeredSnapshotBytes(layers: readonly FilterParameters[]): number {
  let total = LAYERED_HEADER_BYTES
  for (const parameters of layers) total += LAYER_RECORD_BYTES + snapshotBytes(parameters)
  return total
}

function corrupt(message: string, cause?: unknown): BloomError {
  return new BloomError('BLOOM_CORRUPT_SNAPSHOT', `layered snapshot ${message}`, cause === undefined ? undefined : { cause })
}

/**
 * Reads the policy and layer count from a layered snapshot's header.
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` (truncated, bad checksum, impossible fields) or
 *   `BLOOM_UNSUPPORTED_VERSION` (not format version 2, or an unknown policy or hash scheme).
 */
export function decodeLayeredHeader(bytes: Uint8Array): { policy: LayerPolicy; layers: number } {
  if (!(bytes instanceof Uint8Array)) {
    throw new BloomError('BLOOM_INVALID_PARAMETER', `snapshot must be a Uint8Array; got ${Object.prototype.toString.call(bytes)}`)
  }
  const version = snapshotVersionOf(bytes)
  if (version === undefined) throw corrupt(bytes.length < 6 ? `is truncated: ${bytes.length} bytes` : 'does not start with "BLMK": not a bloomkit snapshot')
  if (version !== LAYERED_SNAPSHOT_VERSION) {
    throw new BloomError(
      'BLOOM_UNSUPPORTED_VERSION',
      `snapshot format version ${version} is not a layered snapshot; layered filters read version ${LAYERED_SNAPSHOT_VERSION}` +
        (version === 1 ? ' (a version-1 snapshot is a fixed filter: import it with the backend’s fixed filter)' : ''),
    )
  }
  if (bytes.length < LAYERED_HEADER_BYTES) throw corrupt(`is truncated: ${bytes.length} bytes, the header alone is ${LAYERED_HEADER_BYTES}`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, LAYERED_HEADER_BYTES)
  if (view.getUint32(36, true) !== crc32(bytes.subarray(0, 36)) || view.getUint32(64, true) !== crc32(bytes.subarray(0, 64))) {
    throw corrupt('header fails its CRC-32 check')
  }
  const kind = view.getUint8(6) === POLICY_CODES.scalable ? 'scalable' : view.getUint8(6) === POLICY_CODES.rotating ? 'rotating' : undefined
  if (kind === undefined) {
    throw new BloomError('BLOOM_UNSUPPORTED_VERSION', `layered snapshot uses policy ${view.getUint8(6)}; this release knows 1 (scalable) and 2 (rotating)`)
  }
  const scheme = view.getUint8(7)
  const layout = scheme === 0 ? undefined : layoutOfScheme(scheme, 'the layered snapshot')
  if (view.getUint32(60, true) !== 0) throw corrupt('has unknown flags set')
  const shards = view.getUint32(12, true)
  const growth = view.getUint32(32, true)
  const seconds = view.getUint32(48, true)
  const keep = view.getUint32(52, true)
  let policy: LayerPolicy
  try {
    checkErrorRate('errorRate', view.getFloat64(24, true))
    if (kind === 'scalable' && (seconds !== 0 || keep !== 0)) throw new RangeError('a scalable filter has window seconds and keep 0')
    const options = {
      capacity: getUint64(view, 16),
      errorRate: view.getFloat64(24, true),
      growth: growth === 0 ? undefined : growth,
      tightening: view.getFloat64(40, true),
      seed: view.getUint32(8, true),
      layout,
      shards: shards === 0 ? undefined : shards,
      ...(kind === 'rotating' ? { window: { seconds, keep } } : {}),
    }
    if (kind === 'scalable' && growth === 0) throw new RangeError('a scalable filter has growth ≥ 1')
    policy = layerPolicyOf(options as Parameters<typeof layerPolicyOf>[0])
  } catch (error) {
    throw corrupt(`header holds an impossible policy: ${(error as Error).message}`, error)
  }
  return { policy, layers: view.getUint32(56, true) }
}

/**
 * Checks a whole layered snapshot held in memory and returns its policy and layers (payloads are
 * views, not copies). Every layer's version-1 snapshot is checked as `decodeSnapshot` does, and
 * must have the policy's seed.
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` or `BLOOM_UNSUPPORTED_VERSION`.
 */
export function decodeLayeredSnapshot(bytes: Uint8Array): LayeredSnapshot {
  const { policy, layers: count } = decodeLayeredHeader(bytes)
  const layers: SnapshotLayer[] = []
  let at = LAYERED_HEADER_BYTES
  let lastWindow = 0
  for (let i = 0; i < count; i++) {
    if (bytes.length < at + LAYER_RECORD_BYTES + SNAPSHOT_HEADER_BYTES) throw corrupt(`is truncated in layer ${i} of ${count}`)
    const record = new DataView(bytes.buffer, bytes.byteOffset + at, LAYER_RECORD_BYTES)
    if (record.getUint32(16, true) !== crc32(bytes.subarray(at, at + 16))) throw corrupt(`layer ${i}'s record fails its CRC-32 check`)
    const window = getUint64(record, 0)
    const layerCount = getUint64(record, 8)
    if (policy.kind === 'scalable' ? window !== 0 : window < lastWindow || window > maxWindow(policy)) {
      const rule = policy.kind === 'scalable' ? 'a scalable filter’s layers have window 0' : window < lastWindow ? 'windows must not decrease' : `windows start by 2^53 − 1 ms (at most ${maxWindow(policy)})`
      throw corrupt(`layer ${i} has window ${window}: ${rule}`)
    }
    lastWindow = window
    at += LAYER_RECORD_BYTES
    const header = new DataView(bytes.buffer, bytes.byteOffset + at, SNAPSHOT_HEADER_BYTES)
    const bits = getUint64(header, 16)
    const length = SNAPSHOT_HEADER_BYTES + bits / 8 + 4
    if (!Number.isInteger(length) || bytes.length < at + length) throw corrupt(`is truncated in layer ${i} of ${count}`)
    let layer
    try {
      layer = decodeSnapshot(bytes.subarray(at, at + length))
    } catch (error) {
      if (error instanceof BloomError && error.code === 'BLOOM_UNSUPPORTED_VERSION') throw error
      throw corrupt(`layer ${i}: ${(error as Error).message}`, error)
    }
    if (layer.parameters.seed !== policy.seed) throw corrupt(`layer ${i} has another seed than the filter`)
    layers.push({ window, count: layerCount, parameters: checkParameters(layer.parameters), payload: layer.payload })
    at += length
  }
  if (at !== bytes.length) throw corrupt(`has ${bytes.length - at} trailing bytes after its ${count} layers`)
  return { policy, layers }
}

/** One layer to write: its window, its count of new keys and its version-1 snapshot. */
export interface LayerToWrite {
  readonly window: number
  readonly count: number
  readonly snapshot: Uint8Array
}

/** A whole layered snapshot: the header, then per layer its record and version-1 snapshot. */
export function encodeLayeredSnapshot(policy: LayerPolicy, layers: readonly LayerToWrite[]): Uint8Array {
  let length = LAYERED_HEADER_BYTES
  for (const layer of layers) length += LAYER_RECORD_BYTES + layer.snapshot.length
  const out = new Uint8Array(length)
  out.set(encodeLayeredHeader(policy, layers.length), 0)
  let at = LAYERED_HEADER_BYTES
  for (const layer of layers) {
    out.set(encodeLayerRecord(layer.window, layer.count), at)
    out.set(layer.snapshot, at + LAYER_RECORD_BYTES)
    at += LAYER_RECORD_BYTES + layer.snapshot.length
  }
  return out
}
