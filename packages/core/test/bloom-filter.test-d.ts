import { expectTypeOf, test } from 'vitest'
import type { BloomFilter, BloomKey, FilterParameters } from '@bloomkit/core'

declare const syncFilter: BloomFilter<true>
declare const asyncFilter: BloomFilter<false>

test('a filter over a synchronous store returns plain values', () => {
  expectTypeOf(syncFilter.add('k')).toEqualTypeOf<boolean>()
  expectTypeOf(syncFilter.has(new Uint8Array(1))).toEqualTypeOf<boolean>()
  expectTypeOf(syncFilter.addMany(['a', 'b'])).toEqualTypeOf<boolean[]>()
  expectTypeOf(syncFilter.export()).toEqualTypeOf<Uint8Array>()
  expectTypeOf(syncFilter.estimateCount()).toEqualTypeOf<number>()
  expectTypeOf(syncFilter.countSetBits()).toEqualTypeOf<number[]>()
  expectTypeOf(syncFilter.merge(syncFilter)).toEqualTypeOf<void>()
})

test('a filter over an asynchronous store returns Promises, and so does merging across the two', () => {
  expectTypeOf(asyncFilter.add('k')).toEqualTypeOf<Promise<boolean>>()
  expectTypeOf(asyncFilter.hasMany(new Set<BloomKey>())).toEqualTypeOf<Promise<boolean[]>>()
  expectTypeOf(asyncFilter.export()).toEqualTypeOf<Promise<Uint8Array>>()
  expectTypeOf(asyncFilter.countSetBits()).toEqualTypeOf<Promise<number[]>>()
  expectTypeOf(asyncFilter.merge(syncFilter)).toEqualTypeOf<Promise<void>>()
  expectTypeOf(syncFilter.merge(asyncFilter)).toEqualTypeOf<Promise<void>>()
  expectTypeOf(asyncFilter.exportChunks()).toEqualTypeOf<AsyncIterableIterator<Uint8Array>>()
})

test('keys are strings or bytes; parameters are read-only', () => {
  // @ts-expect-error numbers are not keys
  syncFilter.add(42)
  // @ts-expect-error an array of numbers is not keys
  syncFilter.addMany([1, 2])
  expectTypeOf<FilterParameters['bits']>().toEqualTypeOf<number>()
  // @ts-expect-error parameters cannot be changed after creation
  syncFilter.parameters.bits = 8
})
