// Every snapshot format version in one place (docs/SPEC.md, "Snapshot format" and sections 8 and 10).
// Each number names one byte layout forever: a change of layout is a new number, never an edit of
// an existing one, and a number once used is never given to another layout.

/** The first four bytes of every snapshot: "BLMK" read little-endian. */
export const SNAPSHOT_MAGIC = 0x4b4d4c42
/** A fixed filter's snapshot: a 40-byte header, the bits shard after shard, a CRC-32 trailer. */
export const SNAPSHOT_VERSION = 1
/** A layered filter's snapshot (docs/SPEC.md, section 8): a header with the policy, then each layer's record and version-1 snapshot. */
export const LAYERED_SNAPSHOT_VERSION = 2
/** A counting filter's snapshot (docs/SPEC.md, section 10): version 1's header with 4-bit counters for bits. */
export const COUNTING_SNAPSHOT_VERSION = 3
