/** CRC-32 (IEEE 802.3, the one in zlib, PNG and gzip), so any language can check a snapshot. */

const TABLE = (() => {
  const table = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c
  }
  return table
})()

/**
 * Continues a CRC-32 over `bytes`. Start with `crc = 0`; feed chunks in order, passing each
 * result back in; the last result is the checksum (unsigned).
 */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8)
  return ~c >>> 0
}
