import { expectTypeOf, test } from 'vitest'
import type { LayeredLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'

// Types only (never run): open/import without kind resolve to a union that kind narrows; with kind, to the class itself (issue 21).
declare const Level: typeof LevelBloomFilter

test('open and import: without kind a union narrowed by kind; with kind the class itself', () => {
  expectTypeOf(Level.open('x')).resolves.toEqualTypeOf<LevelBloomFilter | LayeredLevelFilter>()
  expectTypeOf(Level.open('x', { kind: 'fixed' })).resolves.toEqualTypeOf<LevelBloomFilter>()
  expectTypeOf(Level.open('x', { kind: 'layered' })).resolves.toEqualTypeOf<LayeredLevelFilter>()
  expectTypeOf(Level.import('x', new Uint8Array())).resolves.toEqualTypeOf<LevelBloomFilter | LayeredLevelFilter>()
  expectTypeOf(Level.import('x', new Uint8Array(), { kind: 'layered' })).resolves.toEqualTypeOf<LayeredLevelFilter>()
  const filter = {} as LevelBloomFilter | LayeredLevelFilter
  if (filter.kind === 'fixed') expectTypeOf(filter).toEqualTypeOf<LevelBloomFilter>()
  else expectTypeOf(filter).toEqualTypeOf<LayeredLevelFilter>()
})
