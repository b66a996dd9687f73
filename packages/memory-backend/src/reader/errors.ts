import { BloomError } from '@bloomkit/core'

/** `BLOOM_CORRUPT_SNAPSHOT`, as the full filter's import throws it. */
export function corrupt(message: string): BloomError {
  return new BloomError('BLOOM_CORRUPT_SNAPSHOT', `snapshot ${message}`)
}

/** `BLOOM_UNSUPPORTED_VERSION`, as the full filter's import throws it. */
export function unsupported(message: string): BloomError {
  return new BloomError('BLOOM_UNSUPPORTED_VERSION', `snapshot ${message}`)
}

