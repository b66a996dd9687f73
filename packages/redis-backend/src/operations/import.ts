import { BloomError, type FilterParameters } from '@bloomkit/core'
import { type SnapshotSource, snapshotSources } from '@bloomkit/core/store'
import { ShardGenerations } from '../layout/shard-generations.js'
import { KeyNames } from '../layout/key-names.js'
import { abandon, checkStoredMeta, createOrFindMeta, lockMeta, unlockMeta } from '../layout/meta-lock.js'
import { randomEpoch, randomToken } from '../layout/meta.js'
import { checkRedisParameters, type RedisSettings } from '../options.js'
import { type RedisClient } from '../wire/client.js'
import { abandonReplacement, clearStaged, commitReplacement, stageReplacement, type Replacement } from './replace-parameters.js'

const { snapshotChunks, snapshotReader } = snapshotSources

/** What `RedisBloomFilter.import` accepts: a whole snapshot, or its chunks in order (core's type). */
export type { SnapshotSource }

/**
 * A filter being imported into: the shards the snapshot is written to, whether the import created
 * the name, and, for an import over a filter with other parameters, the replacement under way.
 */
interface Claim {
  readonly shards: ShardGenerations
  readonly created: boolean
  readonly token: string
  readonly replacement?: Replacement
}

/**
 * Creates the meta for an import (state 'importing'), or locks an existing filter: one with the
 * same parameters is overwritten shard by shard; one with others only with `replaceParameters`,
 * by a replacement (replace-parameters.ts). A new filter gets a feed with `feed: true`; an existing one keeps
 * its own (and must have one when `feed: true` asks for it).
 */
async function claim(client: RedisClient, name: string, parameters: FilterParameters, settings: RedisSettings, counterBits: number): Promise<Claim> {
  const { timeout, feedLength } = settings
  const what = `import "${name}"`
  const checked = checkRedisParameters(parameters, counterBits)
  const names = new KeyNames(name, checked.shards)
  const token = randomToken()
  const fresh = new ShardGenerations(client, names, checked, randomEpoch(), timeout, counterBits, feedLength)
  const counting = counterBits !== 0
  // The meta read once, by the script that tries to create it: what is there is judged from that read.
  const stored = await createOrFindMeta(fresh, 'importing', token, what, { counting })
  if (stored === undefined) return { shards: fresh, created: true, token }
  try {
    checkStoredMeta(fresh, stored, { theirs: 'the snapshot is', counting, remedy: 'import with { replaceParameters: true } to replace it, or use another name' })
  } catch (error) {
    if (!settings.replaceParameters || !(error instanceof BloomError && error.code === 'BLOOM_INCOMPATIBLE')) throw error
    // A counting filter is not replaced by a plain one, nor the other way round.
    if ((stored.counting === true) !== counting) throw error
    if (feedLength > 0 && stored.feedLength === undefined) throw noFeed(name)
    const old = new ShardGenerations(client, new KeyNames(name, stored.parameters.shards), stored.parameters, stored.epoch, timeout, counterBits, stored.feedLength ?? 0)
    await lock(old, token, { force: settings.force })
    try {
      const replacement = await stageReplacement(old, token, counterBits, checked)
      return { shards: replacement.next, created: false, token, replacement }
    } catch (stageError) {
      await abandon(old, token)
      throw stageError
    }
  }
  const shards = new ShardGenerations(client, names, checked, stored.epoch, timeout, counterBits, stored.feedLength ?? 0)
  await lock(shards, token, { force: settings.force })
  return { shards, created: false, token }
}

function noFeed(name: string): BloomError {
  return new BloomError('BLOOM_INCOMPATIBLE', `filter "${name}" exists without a feed; feed: true was asked for. Import into another name with feed: true`)
}

/** Locks an existing filter for an import over it (`replacing`); a forced lock first clears what a killed replacement staged. */
async function lock(shards: ShardGenerations, token: string, { force }: { readonly force: boolean }): Promise<void> {
  await lockMeta(shards, 'replacing', { force, token })
  if (force) await clearStaged(shards)
}

/**
 * Streams a snapshot into the next generation of `name`'s shards and swaps them in once the whole
 * snapshot has passed its length and CRC-32 checks; undoes everything on failure. Returns the
 * filter's shards. See `RedisBloomFilter.import`.
 */
export async function importSnapshot(client: RedisClient, name: string, snapshot: SnapshotSource, settings: RedisSettings, { counting = false }: { readonly counting?: boolean } = {}): Promise<ShardGenerations> {
  const { ttlMs } = settings
  // A whole snapshot's header is checked against its length before anything is claimed.
  const reader = snapshotReader(snapshot, counting ? 'counting' : 'plain')
  const counterBits = counting ? 4 : 0
  let claimed: Claim | undefined
  let committing = false
  // As in a rebuild: once a swap may have happened, a failure still counts a generation (SPEC 9.5).
  let swapping = false
  // Each shard's next-generation key grows as its bytes arrive (bytes allocated so far).
  const allocated = new Map<number, number>()
  try {
    for await (const chunk of snapshotChunks(snapshot)) {
      for (const piece of reader.push(chunk)) {
        claimed ??= await claim(client, name, reader.parameters!, settings, counterBits)
        // Allocated ahead of the writes, so that they land in place (growing by SETRANGE would leave
        // Redis's greedy growth, up to 1 MiB, unused at the end of every shard), but only a step
        // ahead of the bytes that came: a header that promises more than the snapshot holds costs no memory.
        const end = piece.offset + piece.bytes.length
        const had = allocated.get(piece.shard)
        allocated.set(piece.shard, had === undefined ? await claimed.shards.allocateNext(piece.shard, { through: end }) : await claimed.shards.growNext(piece.shard, had, end))
        await claimed.shards.writeNext(piece.shard, piece.offset, piece.bytes)
      }
      if (claimed === undefined && reader.parameters !== undefined) claimed = await claim(client, name, reader.parameters, settings, counterBits)
    }
    reader.finish()
    const { shards, created, token, replacement } = claimed!
    if (replacement !== undefined) {
      committing = true
      await commitReplacement(replacement)
      return shards
    }
    const what = `import "${name}"`
    const shardTtl = created ? ttlMs : await shards.metaTtlMs(what)
    swapping = true
    await shards.forEachShard(async (shard) => {
      await shards.sealNext(shard)
      await shards.swapNext(shard, shardTtl)
    })
    if (created && ttlMs > 0) await shards.call(client.pexpire(shards.names.meta, ttlMs), what)
    await unlockMeta(shards, token, what, { replaced: !created })
    return shards
  } catch (error) {
    // A replacement's commit undoes its own failures before the switch, and cannot go back after it.
    if (claimed?.replacement !== undefined) {
      if (!committing) await abandonReplacement(claimed.replacement)
    } else if (claimed !== undefined) await abandon(claimed.shards, claimed.token, { dropNew: claimed.created, replaced: swapping })
    throw error
  }
}
