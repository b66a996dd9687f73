import { crc32 } from './crc32.js'
import { corrupt, unsupported } from './errors.js'
import { readFixed, uint64, type Probe } from './fixed.js'

/**
 * Checks a layered snapshot (docs/SPEC.md section 8.1) in the order core's `decodeLayeredSnapshot`
 * does, so that a damaged one fails with the code the full filter's import gives, and returns its
 * seed and a probe that asks each live layer: all of a scalable filter's; those of a rotating
 * filter's last `keep` windows, by `clock` at each call (the newest listed window if the clock is
 * behind it), as `LayeredMemoryFilter` does.
 *
 * The header's policy fields are checked against their ranges, but the first layer is not sized
 * (a reader never sizes, section 1): a policy whose first layer no capacity could be sized for,
 * which the full filter refuses, is read.
 * @throws BloomError `BLOOM_CORRUPT_SNAPSHOT` or `BLOOM_UNSUPPORTED_VERSION`.
 */
export function readLayered(bytes: Uint8Array, clock: () => number): { seed: number; probe: Probe } {
  const length = bytes.length
  if (length < 68) throw corrupt('is truncated')
  const view = new DataView(bytes.buffer, bytes.byteOffset, length)
  if (view.getUint32(36, true) !== crc32(bytes, 0, 36) || view.getUint32(64, true) !== crc32(bytes, 0, 64)) throw corrupt('fails its header CRC-32')
  const policy = bytes[6]
  if (policy < 1 || policy > 2) throw unsupported(`has policy ${policy}, unknown here`)
  if (bytes[7] > 3) throw unsupported(`has hash scheme ${bytes[7]}, unknown here`)
  if (view.getUint32(60, true) !== 0) throw corrupt('has unknown flags')
  const seed = view.getUint32(8, true)
  const shards = view.getUint32(12, true)
  const capacity = uint64(view, 16)
  const errorRate = view.getFloat64(24, true)
  const growth = view.getUint32(32, true)
  const tightening = view.getFloat64(40, true)
  const seconds = view.getUint32(48, true)
  const keep = view.getUint32(52, true)
  const rotating = policy === 2
  // Section 8.1's ranges, as core's layerPolicyOf checks them (NaN fails every comparison).
  if (
    !(errorRate > 0 && errorRate < 1 && tightening > 0 && tightening < 1) ||
    capacity < 1 ||
    capacity > Number.MAX_SAFE_INTEGER ||
    growth > 65536 ||
    shards > 65536 ||
    (rotating ? seconds < 1 || keep < 1 || keep > 65536 : seconds !== 0 || keep !== 0 || growth < 1)
  ) {
    throw corrupt('has an impossible policy')
  }
  const lastWindow = rotating ? Math.floor(Number.MAX_SAFE_INTEGER / (seconds * 1000)) : 0
  const count = view.getUint32(56, true)
  const layers: Array<{ window: number; probe: Probe }> = []
  let at = 68
  let newest = 0
  for (let i = 0; i < count; i++) {
    if (length < at + 60) throw corrupt(`is truncated in layer ${i}`)
    if (view.getUint32(at + 16, true) !== crc32(bytes, at, at + 16)) throw corrupt(`fails layer ${i}'s record CRC-32`)
    const window = uint64(view, at)
    // Windows never decrease, and start by 2^53 − 1 ms; a scalable filter's are all 0.
    if (window < newest || window > lastWindow) throw corrupt(`layer ${i} has window ${window}`)
    newest = window
    at += 20
    const end = at + 44 + uint64(view, at + 16) / 8
    if (!Number.isInteger(end) || end > length) throw corrupt(`is truncated in layer ${i}`)
    const layer = readFixed(bytes.subarray(at, end))
    if (layer.seed !== seed) throw corrupt(`layer ${i} has another seed than the filter`)
    layers.push({ window, probe: layer.probe })
    at = end
  }
  if (at !== length) throw corrupt(`has ${length - at} trailing bytes`)
  return {
    seed,
    probe(a, b) {
      let oldest = 0
      if (rotating) {
        const now = Math.floor(clock() / (seconds * 1000))
        oldest = (now > newest ? now : newest) - keep + 1
      }
      for (const layer of layers) if (layer.window >= oldest && layer.probe(a, b)) return true
      return false
    },
  }
}
