import { BloomError } from '@bloomkit/core'

/** What to do about a filter whose stored bits are damaged or gone. */
const RECOVERY =
  'The filter cannot answer without false negatives: restore the folder from a backup, or delete it and rebuild the filter from its source (create it again and add every key, or import a snapshot).'

/** A `BLOOM_CORRUPT_STORE` error naming the location and what is wrong there. */
export function corruptStore(location: string, what: string): BloomError {
  return new BloomError('BLOOM_CORRUPT_STORE', `${location}: ${what}. ${RECOVERY}`)
}

/** A `BLOOM_CORRUPT_STORE` error for a location that holds something other than a bloomkit filter. */
export function notAFilter(location: string, what: string): BloomError {
  return new BloomError('BLOOM_CORRUPT_STORE', `${location}: ${what}`)
}

/** A `BLOOM_DATA_LOST` error: records the filter wrote are gone (LevelDB dropped or lost them). */
export function dataLost(location: string, what: string): BloomError {
  return new BloomError('BLOOM_DATA_LOST', `${location}: ${what}. ${RECOVERY}`)
}

/**
 * Turns a LevelDB error into a BloomError with the original as `cause`: `BLOOM_LOCKED` when
 * another process holds the folder, `BLOOM_CORRUPT_STORE` for corruption, `BLOOM_NOT_FOUND` for a
 * missing database, `BLOOM_STORE_UNAVAILABLE` for the rest (I/O errors, a full disk, a closed database).
 */
export function storeError(location: string, doing: string, error: unknown): BloomError {
  if (error instanceof BloomError) return error
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  const message = `${(error as Error)?.message ?? String(error)}${cause?.message ? ` (${cause.message})` : ''}`
  if (cause?.code === 'LEVEL_LOCKED' || (error as { code?: string })?.code === 'LEVEL_LOCKED') {
    return new BloomError('BLOOM_LOCKED', `${location} is locked by another process`, { cause: error })
  }
  if (/does not exist/.test(message)) return new BloomError('BLOOM_NOT_FOUND', `${location}: no bloomkit filter here`, { cause: error })
  if (/corrupt/i.test(message)) return new BloomError('BLOOM_CORRUPT_STORE', `${location}: LevelDB reports corruption: ${message}. ${RECOVERY}`, { cause: error })
  return new BloomError('BLOOM_STORE_UNAVAILABLE', `${location} ${doing}: ${message}`, { cause: error })
}
