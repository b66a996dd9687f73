// The client's half of a whole-shard read or OR: bit tests and sets on a shard's bytes as Redis
// stores them (SETBIT order: bit p is bit 7 − p % 8 of byte ⌊p / 8⌋), followed by the marker.

/**
 * The 4-byte marker after a shard's `shardBytes` bytes of bits, or −1 when `shard` (a GETRANGE of
 * bits and marker) is shorter: the key is missing or truncated.
 */
export function markerOf(shard: Uint8Array, shardBytes: number): number {
  if (shard.length !== shardBytes + 4) return -1
  return ((shard[shardBytes] << 24) | (shard[shardBytes + 1] << 16) | (shard[shardBytes + 2] << 8) | shard[shardBytes + 3]) >>> 0
}

/**
 * Sets `out[keys[k]]` to 1 when every bit of key `keys[k]` is set in `shard`, else 0, for k in
 * [from, to). Key `i`'s bits are `positions[i·hashes …]`, each below the shard's bit count.
 */
export function testKeys(shard: Uint8Array, positions: Uint32Array, hashes: number, keys: Uint32Array, from: number, to: number, out: Uint8Array): void {
  for (let k = from; k < to; k++) {
    let found = 1
    for (let p = keys[k] * hashes, end = p + hashes; p < end; p++) {
      const bit = positions[p]
      if ((shard[bit >>> 3] & (0x80 >>> (bit & 7))) === 0) found = 0
    }
    out[keys[k]] = found
  }
}

/** Sets every bit of the keys `keys[from … to − 1]` in `bits`. */
export function setKeys(bits: Uint8Array, positions: Uint32Array, hashes: number, keys: Uint32Array, from: number, to: number): void {
  for (let k = from; k < to; k++) {
    for (let p = keys[k] * hashes, end = p + hashes; p < end; p++) {
      const bit = positions[p]
      bits[bit >>> 3] |= 0x80 >>> (bit & 7)
    }
  }
}

/**
 * Adds the keys to `shard` in order, as one BITFIELD of them would: `out[keys[k]]` is 1 when key
 * `keys[k]` had a bit unset in `shard` (the bits before this batch) or by an earlier key of the
 * batch, else 0.
 */
export function addKeys(shard: Uint8Array, positions: Uint32Array, hashes: number, keys: Uint32Array, from: number, to: number, out: Uint8Array): void {
  for (let k = from; k < to; k++) {
    let added = 0
    for (let p = keys[k] * hashes, end = p + hashes; p < end; p++) {
      const bit = positions[p]
      const byte = bit >>> 3
      const mask = 0x80 >>> (bit & 7)
      if ((shard[byte] & mask) === 0) {
        added = 1
        shard[byte] |= mask
      }
    }
    out[keys[k]] = added
  }
}
