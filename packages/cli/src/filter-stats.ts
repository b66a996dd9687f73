import { BloomError, BloomFilter, type FilterParameters } from '@bloomkit/core'
import { KeyHasher, type BitStore } from '@bloomkit/core/store'

/** What `inspect` reports about a filter's fill, from its set bits per shard. */
export interface FillStats {
  /** Set bits in each shard. */
  readonly setBits: readonly number[]
  /** Distinct keys added, estimated from the set bits (as core's `estimateCount`). */
  readonly estimatedCount: number
  /** The false-positive probability of a check now (as core's `errorRate`). */
  readonly errorRate: number
}

/**
 * A store that only knows its set-bit counts: lets core's own estimateCount and errorRate run over
 * counts we gathered once (while streaming a file, or in one pass over Redis), so that the
 * command line never keeps a second copy of those formulas.
 */
class CountsOnly implements BitStore<true> {
  readonly capabilities = { sync: true, persistent: false, shared: false } as const
  constructor(
    readonly parameters: FilterParameters,
    private readonly counts: readonly number[],
  ) {}
  countBits(): readonly number[] {
    return this.counts
  }
  setBits(): void {
    throw unsupported()
  }
  testBits(): void {
    throw unsupported()
  }
  readShard(): Uint8Array {
    throw unsupported()
  }
  writeShard(): void {
    throw unsupported()
  }
  orShard(): void {
    throw unsupported()
  }
  clear(): void {
    throw unsupported()
  }
  close(): void {}
}

function unsupported(): BloomError {
  return new BloomError('BLOOM_INVALID_PARAMETER', 'a counts-only store holds no bits')
}

/** Estimated count and error rate of a filter with `parameters` whose shards hold `setBits` set bits. */
export function fillStats(parameters: FilterParameters, setBits: readonly number[]): FillStats {
  const filter = new BloomFilter(new CountsOnly(parameters, setBits), new KeyHasher(parameters.seed))
  return { setBits, estimatedCount: filter.estimateCount(), errorRate: filter.errorRate() }
}
