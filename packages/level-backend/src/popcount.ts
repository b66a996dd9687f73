const POPCOUNT = Uint8Array.from({ length: 256 }, (_, byte) => {
  let n = 0
  for (let b = byte; b !== 0; b &= b - 1) n++
  return n
})

/** The number of set bits in `bytes`. */
export function popcount(bytes: Uint8Array): number {
  let n = 0
  for (let i = 0; i < bytes.length; i++) n += POPCOUNT[bytes[i]]
  return n
}
