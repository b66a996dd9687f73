import { createKeyHasher, type KeyHasher } from '@bloomkit/core/store'

/**
 * The filter `build` makes over an open store (a layered filter's: its layers) with a hasher of
 * `seed`. If either fails, the store is closed, so that its folder is not left locked by a filter
 * nobody holds.
 */
export async function filterOver<F>(store: { close(): Promise<void> }, seed: number, build: (hasher: KeyHasher) => F): Promise<F> {
  try {
    return build(await createKeyHasher(seed))
  } catch (error) {
    await store.close()
    throw error
  }
}
