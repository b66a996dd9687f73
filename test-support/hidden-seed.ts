import { inspect } from 'node:util'
import { expect } from 'vitest'

/**
 * Asserts that `console.log` / `util.inspect` of `filter` (alone, nested, with hidden properties
 * shown) never prints its seed, nor the hasher's lanes, and says `seed: '<hidden>'` instead: the
 * seed is the key of the keyed hashing. Returns the plain `inspect(filter)` for further checks.
 */
export function expectSeedHidden(filter: object, seed: number): string {
  for (const shown of [inspect(filter), inspect({ filter }, { depth: 10 }), inspect([filter], { showHidden: true, depth: 10 })]) {
    expect(shown).not.toContain(String(seed))
    expect(shown).not.toMatch(/seedA|seedB/)
    expect(shown).toContain("seed: '<hidden>'")
  }
  return inspect(filter)
}
