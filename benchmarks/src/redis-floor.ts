// The Redis suite's floor row (issue 25 item 5): what Redis itself spends per new key on a half-full
// shard, all k bits by one BITFIELD against a block read and the bits it found unset, next to
// bloomkit's own addMany in the same alternation. Standalone only (it copies one shard).
import { shardBitsOf, TEST_BITS, testBitSetBit } from '@bloomkit/core/store'
import { BLOCK_BITS } from '@bloomkit/core/spec'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import type { Redis } from 'ioredis'
import { median, userKeys, xorshift32 } from './measure.js'
import { BATCH, type RedisBench } from './redis-bench.js'
import { timeCalls } from './redis-cost.js'

/** The filter the floor row measures: its name, an open handle, and the key holding a copy of its one shard as the row starts. */
export interface FloorCopy {
  readonly pristine: string
  readonly name: string
  readonly filter: RedisBloomFilter
}

/** Requests of {@link BATCH} keys of each kind per round of the floor row (after 2 warm-up requests), and its seed. */
export const FLOOR_REQUESTS = 40
const FLOOR_SEED = 0x25_05

/** Redis CPU per key of the floor's three commands (medians over requests), and the share of bits its block reads found set. */
export interface Floor {
  readonly allBitsUs: number
  readonly readUs: number
  readonly missingUs: number
  /** bloomkit's own `addMany` of new keys in the same alternation (see {@link measureFloor}), as it is and with all k bits (`blockReads: false`). */
  readonly bloomkitUs: number
  readonly bloomkitAllBitsUs: number
  readonly setShare: number
}

/**
 * Issue 25 item 5's floor, in raw commands on a copy of a half-full filter's shard (made afresh
 * each round, so each starts from the same bits and the filter itself is untouched): Redis
 * CPU per new key for (a) one BITFIELD of `hashes` `SET u1` a key, as a full add sends, (b) a
 * pipelined GETRANGE of each key's block (no MULTI), (c) one BITFIELD of only the bits (b) found
 * unset. Blocks, and bits within them, come from a fixed seed: random, as a new key's are. The
 * three alternate request by request with `addMany` of 1000 new keys into `filter`, as it is and
 * opened with `blockReads: false` (all k bits by BITFIELD, as before partial adds), each between two
 * `INFO cpu`s, so that load from other processes and the server's state hit them alike (figures
 * taken minutes apart, as the timed rows', can differ by 2×). Whatever a partial add does around
 * (b) and (c), Redis spends at least that. `filter` has one shard, whose key `pristine` copies: it
 * is set back to that copy each round (the timed calls before have added to it; it is destroyed after).
 */
export async function measureFloor({ rounds, progress }: Pick<RedisBench, 'rounds' | 'progress'>, redis: Redis, { pristine, name, filter }: FloorCopy): Promise<Floor> {
  const { hashes } = filter.parameters
  const allBitsFilter = await RedisBloomFilter.open(redis, name, { blockReads: false, kind: 'fixed' })
  const copy = `${pristine}:copy`
  const next = xorshift32(FLOOR_SEED)
  const blocks = shardBitsOf(filter.parameters) / BLOCK_BITS
  let fresh = 0
  // One request's keys: each key's bit offsets in the shard, all in one random block.
  const positions = () => {
    const keys: number[][] = []
    for (let i = 0; i < BATCH; i++) {
      const start = (next() % blocks) * BLOCK_BITS
      keys.push(Array.from({ length: hashes }, () => start + (next() % BLOCK_BITS)))
    }
    return keys
  }
  // A BITFIELD setting `offsets`, its arguments made before the clock starts.
  const setBits = (offsets: number[]) => {
    const args = [copy, ...offsets.flatMap((offset) => ['SET', 'u1', offset, 1])]
    return () => redis.call('BITFIELD', args)
  }
  const readBlocks = async (keys: number[][]) => {
    const pipeline = redis.pipeline()
    for (const [first] of keys) {
      const byte = (first - (first % BLOCK_BITS)) / 8
      pipeline.getrangeBuffer(copy, byte, byte + BLOCK_BITS / 8 - 1)
    }
    return (await pipeline.exec())!.map(([error, block]) => {
      if (error) throw error
      return block as Buffer
    })
  }
  const serverUs = async (body: () => Promise<unknown>) => (await timeCalls(redis, BATCH, 1, body, 0)).serverUs
  const allBits: number[] = []
  const read: number[] = []
  const missing: number[] = []
  const bloomkit: number[] = []
  const bloomkitAllBits: number[] = []
  let set = 0
  let probed = 0
  for (let round = 0; round < rounds; round++) {
    progress(`standalone, floor of partial adds: round ${round + 1} of ${rounds}`)
    for (const key of [copy, filter.keys[1]]) await redis.call('COPY', pristine, key, 'REPLACE')
    let last: number[][] = []
    for (let request = -2; request < FLOOR_REQUESTS; request++) {
      const keys = (last = positions())
      const blocksRead: Buffer[] = []
      const readUs = await serverUs(async () => blocksRead.push(...(await readBlocks(keys))))
      const unset = keys.flatMap((offsets, key) => offsets.filter((offset) => testBitSetBit(blocksRead[key], 0, offset % BLOCK_BITS, TEST_BITS) === 0))
      const missingUs = await serverUs(setBits(unset))
      const allBitsUs = await serverUs(setBits(positions().flat()))
      const newKeys = userKeys(fresh, (fresh += BATCH)).map((key) => `floor:${key}`)
      const bloomkitUs = await serverUs(() => filter.addMany(newKeys))
      const moreKeys = userKeys(fresh, (fresh += BATCH)).map((key) => `floor:${key}`)
      const bloomkitAllBitsUs = await serverUs(() => allBitsFilter.addMany(moreKeys))
      if (request < 0) continue
      bloomkit.push(bloomkitUs)
      bloomkitAllBits.push(bloomkitAllBitsUs)
      read.push(readUs)
      missing.push(missingUs)
      allBits.push(allBitsUs)
      set += BATCH * hashes - unset.length
      probed += BATCH * hashes
    }
    // The bits found unset were all an add had to set: the last request's bits are all set now.
    const check = (await redis.call('BITFIELD_RO', [copy, ...last.flat().flatMap((offset) => ['GET', 'u1', offset])])) as number[]
    if (check.includes(0)) throw new Error('redis floor: a bit its block read found set is unset (the read and BITFIELD disagree on bit order)')
  }
  await allBitsFilter.close()
  await redis.del(copy)
  return { allBitsUs: median(allBits), readUs: median(read), missingUs: median(missing), bloomkitUs: median(bloomkit), bloomkitAllBitsUs: median(bloomkitAllBits), setShare: set / probed }
}
