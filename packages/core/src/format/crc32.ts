/** CRC-32 (IEEE 802.3, the one in zlib, PNG and gzip), so any language can check a snapshot. */

// Four tables, for "slicing by 4": four bytes per step. Snapshots and LevelDB pages and log records
// are checksummed whole, on every write and load, where the byte-at-a-time loop showed up.
const TABLES = (() => {
  const t = new Int32Array(4 * 256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]
    for (let k = 1; k < 4; k++) {
      c = t[c & 0xff] ^ (c >>> 8)
      t[k * 256 + n] = c
    }
  }
  return t
})()

/**
 * Continues a CRC-32 over `bytes`. Start with `crc = 0`; feed chunks in order, passing each
 * result back in; the last result is the checksum (unsigned).
 */
export function crc32(bytes: Uint8Array, crc = 0): number {
  const t = TABLES
  let c = ~crc
  let i = 0
  const end4 = bytes.length - 3
  for (; i < end4; i += 4) {
    c ^= bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24)
    c = t[768 + (c & 0xff)] ^ t[512 + ((c >>> 8) & 0xff)] ^ t[256 + ((c >>> 16) & 0xff)] ^ t[c >>> 24]
  }
  for (; i < bytes.length; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8)
  return ~c >>> 0
}
