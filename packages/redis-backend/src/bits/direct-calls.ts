// The call objects of the batch paths (direct-batch.ts): what one batch, one request, one block
// read and one BITFIELD send carry, by name.
import type { PositionBatch } from '@bloomkit/core/store'
import type { BitOperation, Part } from './parts.js'

/** A batch's parts for the batch connections (`DirectBatches.send` (direct-batch.ts)). */
export interface DirectBatch {
  readonly op: BitOperation
  readonly batch: PositionBatch
  /** Parts read by block: checks, and adds that read first. */
  readonly blocks: readonly Part[]
  /** Parts sent by BITFIELD (adds) or BITFIELD_RO (checks). */
  readonly perBit: readonly Part[]
  readonly out: Uint8Array
  /** An add whose writes after its block reads set only the bits the reads found missing (see `DirectBatches.send` (direct-batch.ts)). */
  readonly partial?: boolean
}

/** How one request is sent. */
export interface RequestOptions {
  /** The request begins with the meta's HMGET (the batch's first request to the meta's node), whose verdict comes first. */
  readonly withMeta: boolean
}

/** The guard of an add sending only missing bits (see `DirectBatches.send` (direct-batch.ts)), shared by its chunks. */
export interface Guard {
  /** The meta's state and generation read before the reads. */
  readonly before: Promise<string | undefined>
  /** 1 for each position the reads found set. */
  readonly mask: Uint8Array
  /** The parts written partly, or found present: written again in full if the guard fails. */
  readonly partly: Part[]
}

/** One chunk of an add that reads its keys' blocks first (`DirectBatches.addReadingFirst` (direct-batch.ts)). */
export interface ReadingFirst {
  readonly batch: PositionBatch
  readonly parts: Part[]
  readonly out: Uint8Array
  /** Resolves once the previous chunk's writes were sent: a key twice in a batch is written in input order. */
  readonly previous: Promise<unknown>
  readonly guard?: Guard
  /** The last chunk of a guarded add: the guard is read again after its writes. */
  readonly guardAfter?: boolean
}

/** A block read over a batch connection (`DirectBatches.readBlocks` (direct-batch.ts)). */
export interface BlockReading {
  readonly batch: PositionBatch
  readonly parts: Part[]
  /** Gets `flagged[i]` = 1 for part i when its shard's marker is the flagged one (or the node redirected it). */
  readonly flagged?: Uint8Array
  /** A guarded add's read, without MULTI/EXEC: gets a 1 for each position already set. */
  readonly mask?: Uint8Array
}

/** BITFIELDs over a batch connection (`DirectBatches.bitfields` (direct-batch.ts)). */
export interface BitfieldSending {
  readonly op: BitOperation
  readonly batch: PositionBatch
  readonly parts: Part[]
  /** Positions left out (a bit already set, see `writeBitfield`). */
  readonly skip?: Uint8Array
}
