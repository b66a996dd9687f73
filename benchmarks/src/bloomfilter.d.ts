declare module 'bloomfilter' {
  /** `bloomfilter`@1.1.0 ships no types; only what the benchmark uses. */
  export class BloomFilter {
    constructor(bits: number, hashes: number)
    readonly buckets: Uint32Array
    add(value: string): void
    test(value: string): boolean
    /** The key's k bit positions, in a reused array. */
    locations(value: string): ArrayLike<number>
  }
}
