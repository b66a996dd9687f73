type MaybeWellFormed = string & { isWellFormed(): boolean } // ES2024, in Node ≥ 20

/**
 * Whether `text` holds no lone surrogate, i.e. reaches Redis as itself (UTF-8). Its own module:
 * the options' check of a guard's name and the cache-entry keys both ask it.
 */
export function isWellFormed(text: string): boolean {
  return (text as MaybeWellFormed).isWellFormed()
}
