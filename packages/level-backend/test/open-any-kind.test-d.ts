import { expectTypeOf, test } from 'vitest'
import type { CountingLevelFilter, LayeredLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'

// Types only (never run): open/import without kind resolve to a union that kind narrows; with kind, to the class itself (issues 21, 24).
declare const Level: typeof LevelBloomFilter

test('open and import: without kind a union narrowed by kind; with kind the class itself', () => {
  expectTypeOf(Level.open('x')).resolves.toEqualTypeOf<LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter>()
  expectTypeOf(Level.open('x', { kind: 'fixed' })).resolves.toEqualTypeOf<LevelBloomFilter>()
  expectTypeOf(Level.open('x', { kind: 'layered' })).resolves.toEqualTypeOf<LayeredLevelFilter>()
  expectTypeOf(Level.open('x', { kind: 'counting' })).resolves.toEqualTypeOf<CountingLevelFilter>()
  expectTypeOf(Level.import('x', new Uint8Array())).resolves.toEqualTypeOf<LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter>()
  expectTypeOf(Level.import('x', new Uint8Array(), { kind: 'layered' })).resolves.toEqualTypeOf<LayeredLevelFilter>()
  expectTypeOf(Level.import('x', new Uint8Array(), { kind: 'counting' })).resolves.toEqualTypeOf<CountingLevelFilter>()
  const filter = {} as LevelBloomFilter | LayeredLevelFilter | CountingLevelFilter
  if (filter.kind === 'fixed') expectTypeOf(filter).toEqualTypeOf<LevelBloomFilter>()
  else if (filter.kind === 'counting') expectTypeOf(filter).toEqualTypeOf<CountingLevelFilter>()
  else expectTypeOf(filter).toEqualTypeOf<LayeredLevelFilter>()
})
