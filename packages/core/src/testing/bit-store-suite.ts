import type { BitStore } from '../bit-store.js'
import { BloomError } from '../errors.js'
import { shardBitsOf, shardBytesOf, type FilterParameters } from '../parameters.js'
import { batchOf, check, checkBytes, spreadKeys, type TestFunction } from './suite-support.js'

export type { TestFunction } from './suite-support.js'

/** Inputs of {@link bitStoreSuite}. */
export interface BitStoreSuiteOptions {
  /** Registers one test; pass your runner's `test`. */
  readonly test: TestFunction
  /** A fresh, empty store for these parameters, isolated from every other store it has made. */
  readonly factory: (parameters: FilterParameters) => BitStore | Promise<BitStore>
  /** Runs after each test with the stores it made (already closed), e.g. to delete their data. */
  readonly cleanup?: (stores: BitStore[]) => void | Promise<void>
  /** Per-test timeout in ms, for stores behind a network. */
  readonly timeout?: number
  /** Prefix of the test names. Default: 'BitStore'. */
  readonly name?: string
  /**
   * A new handle on the bits of `store` (already closed): the same folder, the same Redis name.
   * Required when the store declares `capabilities.persistent`; the "persistent" group runs with it.
   */
  readonly reopen?: (store: BitStore) => BitStore | Promise<BitStore>
  /**
   * A second handle on the bits of `store` while `store` stays open (another client of the same
   * Redis name). Required when the store declares `capabilities.shared`; the "shared" group runs with it.
   */
  readonly share?: (store: BitStore) => BitStore | Promise<BitStore>
}

/** A store from the factory, closed and cleaned up after the test whatever happens. */
type WithStores = (title: string, body: (make: (p?: FilterParameters) => Promise<BitStore>, track: (store: BitStore) => BitStore) => Promise<void>) => void

/** The small filter most checks use: 4 shards of 1 024 bits, 3 hashes. */
const small: FilterParameters = { bits: 4 * 1024, hashes: 3, shards: 4, seed: 0, layout: 'classic', scheme: 3 }

/**
 * The BitStore contract as tests. Every store runs it (a few lines per backend), and core runs it
 * on its reference store. Needs no particular test runner: pass `test`.
 *
 * @example
 * import { test } from 'vitest'
 * bitStoreSuite({ test, factory: (parameters) => new MemoryBitStore(parameters) })
 */
export function bitStoreSuite(options: BitStoreSuiteOptions): void {
  bitStoreContractTests(options)
  if (options.reopen !== undefined) bitStorePersistenceTests(options)
  if (options.share !== undefined) bitStoreSharingTests(options)
}

function storesFor(options: BitStoreSuiteOptions): WithStores {
  const { test, factory, cleanup, timeout, name = 'BitStore' } = options
  return (title, body) => {
    test(
      `${name}: ${title}`,
      async () => {
        const stores: BitStore[] = []
        const track = (store: BitStore) => {
          stores.push(store)
          return store
        }
        const make = async (parameters: FilterParameters = small) => track(await factory(parameters))
        try {
          await body(make, track)
        } finally {
          for (const store of stores) await store.close()
          await cleanup?.(stores)
        }
      },
      timeout,
    )
  }
}

/**
 * The contract every store meets: new-key reporting, bit order, shard independence, counts, reads
 * and writes at any offset, clear, isolation between stores, a 20 000-key batch over 64 shards,
 * concurrent batches and close. Also checks that a store declaring `persistent` or `shared` was
 * given the `reopen` or `share` factory its group needs, so no declared capability goes untested.
 */
export function bitStoreContractTests(options: BitStoreSuiteOptions): void {
  const withStores = storesFor(options)

  withStores('declares its capabilities and parameters; each declared capability has its group', async (make) => {
    const store = await make()
    for (const capability of ['sync', 'persistent', 'shared'] as const) {
      check(typeof store.capabilities[capability] === 'boolean', `capabilities.${capability} must be a boolean`)
    }
    check(!store.capabilities.persistent || options.reopen !== undefined, 'a persistent store must give the suite `reopen`, so that the persistent group runs')
    check(!store.capabilities.shared || options.share !== undefined, 'a shared store must give the suite `share`, so that the shared group runs')
    const { bits, hashes, shards, seed } = store.parameters
    check(bits === small.bits && hashes === small.hashes && shards === small.shards && seed === small.seed, 'parameters must be the ones it was made for')
    const result = store.countBits()
    check(store.capabilities.sync === !(result instanceof Promise), 'capabilities.sync must match whether methods return Promises')
    await result
  })

  withStores('setBits reports which keys were new, in order; testBits finds them', async (make) => {
    const store = await make()
    const first = batchOf(3, [
      { shard: 0, positions: [1, 2, 3] },
      { shard: 1, positions: [1, 2, 3] },
      { shard: 0, positions: [1, 2, 3] },
    ])
    const out = new Uint8Array(3).fill(7)
    await store.setBits(first, out)
    checkBytes(out, [1, 1, 0], 'new flags of a batch that repeats a key')
    const probe = batchOf(3, [
      { shard: 0, positions: [3, 2, 1] },
      { shard: 2, positions: [1, 2, 3] },
      { shard: 0, positions: [1, 2, 4] },
      { shard: 1, positions: [2, 2, 2] },
    ])
    const found = new Uint8Array(4).fill(7)
    await store.testBits(probe, found)
    checkBytes(found, [1, 0, 0, 1], 'testBits after setBits')
    const partial = new Uint8Array(1)
    await store.setBits(batchOf(3, [{ shard: 0, positions: [1, 2, 9] }]), partial)
    checkBytes(partial, [1], 'a key with one bit unset is new')
  })

  withStores('bit p of a shard is bit 7 − p mod 8 of byte ⌊p/8⌋ (Redis SETBIT order)', async (make) => {
    const store = await make()
    const last = shardBitsOf(small) - 1
    await store.setBits(batchOf(3, [{ shard: 0, positions: [0, 7, 9] }, { shard: 3, positions: [last, last, last] }]), new Uint8Array(2))
    checkBytes(await store.readShard(0, 0, 3), [0x81, 0x40, 0], 'shard 0, first bytes')
    checkBytes(await store.readShard(3, shardBytesOf(small) - 1, 1), [0x01], 'shard 3, last byte')
    checkBytes(await store.readShard(1, 0, 2), [0, 0], 'an untouched shard')
  })

  withStores('counts set bits per shard', async (make) => {
    const store = await make()
    await store.setBits(batchOf(3, [{ shard: 0, positions: [5, 6, 7] }, { shard: 2, positions: [9, 9, 1000] }]), new Uint8Array(2))
    const counts = Array.from(await store.countBits())
    check(JSON.stringify(counts) === JSON.stringify([3, 0, 2, 0]), `countBits: expected [3,0,2,0], got ${JSON.stringify(counts)}`)
  })

  withStores('writeShard overwrites, orShard ORs, readShard reads any range', async (make) => {
    const store = await make()
    const bytes = shardBytesOf(small)
    await store.setBits(batchOf(3, [{ shard: 1, positions: [0, 8, 16] }]), new Uint8Array(1))
    await store.writeShard(1, 1, Uint8Array.of(0x0f, 0xf0))
    checkBytes(await store.readShard(1, 0, 4), [0x80, 0x0f, 0xf0, 0], 'after writeShard')
    await store.orShard(1, 2, Uint8Array.of(0x0f, 0x01))
    checkBytes(await store.readShard(1, 0, 4), [0x80, 0x0f, 0xff, 0x01], 'after orShard')
    const whole = new Uint8Array(bytes).map((_, i) => (i * 37) & 0xff)
    await store.writeShard(2, 0, whole)
    checkBytes(await store.readShard(2, 0, bytes), whole, 'a whole shard written and read back')
    const found = new Uint8Array(1)
    await store.testBits(batchOf(3, [{ shard: 1, positions: [12, 13, 31] }]), found)
    checkBytes(found, [1], 'bits written with writeShard/orShard are seen by testBits')
  })

  withStores('clear unsets every bit', async (make) => {
    const store = await make()
    await store.setBits(batchOf(3, [{ shard: 3, positions: [1, 2, 3] }]), new Uint8Array(1))
    await store.clear()
    const counts = Array.from(await store.countBits())
    check(counts.every((n) => n === 0), `after clear: counts ${JSON.stringify(counts)}`)
    const found = new Uint8Array(1).fill(7)
    await store.testBits(batchOf(3, [{ shard: 3, positions: [1, 2, 3] }]), found)
    checkBytes(found, [0], 'after clear')
  })

  withStores('two stores from the factory share no bits', async (make) => {
    const one = await make()
    const two = await make()
    await one.setBits(batchOf(3, [{ shard: 0, positions: [1, 2, 3] }]), new Uint8Array(1))
    const found = new Uint8Array(1)
    await two.testBits(batchOf(3, [{ shard: 0, positions: [1, 2, 3] }]), found)
    checkBytes(found, [0], 'the other store')
  })

  withStores('a large batch over many shards: every key set is found, counts add up', async (make) => {
    const parameters: FilterParameters = { bits: 64 * 8192, hashes: 7, shards: 64, seed: 0, layout: 'classic', scheme: 3 }
    const store = await make(parameters)
    const keys = spreadKeys(parameters, 20_000, 42)
    const added = new Uint8Array(keys.length)
    await store.setBits(batchOf(7, keys), added)
    const found = new Uint8Array(keys.length)
    await store.testBits(batchOf(7, keys), found)
    check(found.every((bit) => bit === 1), 'every key just set must test as present')
    const expected = new Array<number>(parameters.shards).fill(0)
    const seen = new Set<string>()
    for (const { shard, positions } of keys) {
      for (const p of positions) {
        if (!seen.has(`${shard}:${p}`)) {
          seen.add(`${shard}:${p}`)
          expected[shard]++
        }
      }
    }
    const counts = Array.from(await store.countBits())
    check(JSON.stringify(counts) === JSON.stringify(expected), 'countBits must equal the distinct positions set per shard')
    const again = new Uint8Array(keys.length)
    await store.setBits(batchOf(7, keys), again)
    check(again.every((bit) => bit === 0), 'setting the same keys again reports none as new')
  })

  withStores('concurrent setBits calls lose nothing', async (make) => {
    const store = await make({ bits: 16 * 4096, hashes: 5, shards: 16, seed: 0, layout: 'classic', scheme: 3 })
    const parameters = store.parameters
    const groups = Array.from({ length: 8 }, (_, g) => spreadKeys(parameters, 500, 1000 + g))
    await Promise.all(groups.map((keys) => store.setBits(batchOf(5, keys), new Uint8Array(keys.length))))
    for (const keys of groups) {
      const found = new Uint8Array(keys.length)
      await store.testBits(batchOf(5, keys), found)
      check(found.every((bit) => bit === 1), 'a key from a concurrent batch is missing')
    }
  })

  withStores('close is idempotent, and a closed store refuses work with BLOOM_CLOSED', async (make) => {
    const store = await make()
    await store.close()
    await store.close()
    let error: unknown
    try {
      await store.testBits(batchOf(3, [{ shard: 0, positions: [1, 2, 3] }]), new Uint8Array(1))
    } catch (caught) {
      error = caught
    }
    check(error instanceof BloomError && error.code === 'BLOOM_CLOSED', `expected BLOOM_CLOSED, got ${String(error)}`)
  })
}

/**
 * For stores that declare `capabilities.persistent` (a folder, a server): bits, counts and bytes
 * survive closing the store and opening its data again through `reopen`.
 */
export function bitStorePersistenceTests(options: BitStoreSuiteOptions): void {
  const withStores = storesFor(options)
  const reopen = options.reopen!
  withStores('persistent: set bits, counts and bytes survive close and reopen', async (make, track) => {
    const parameters: FilterParameters = { bits: 8 * 8192, hashes: 5, shards: 8, seed: 0, layout: 'classic', scheme: 3 }
    const store = await make(parameters)
    check(store.capabilities.persistent, 'a store given `reopen` must declare capabilities.persistent')
    const keys = spreadKeys(parameters, 2_000, 7)
    await store.setBits(batchOf(5, keys), new Uint8Array(keys.length))
    const counts = Array.from(await store.countBits())
    const bytes = await store.readShard(3, 0, shardBytesOf(parameters))
    const copy = bytes.slice()
    await store.close()
    const again = track(await reopen(store))
    const found = new Uint8Array(keys.length)
    await again.testBits(batchOf(5, keys), found)
    check(found.every((bit) => bit === 1), 'a key set before close must test as present after reopen')
    const after = Array.from(await again.countBits())
    check(JSON.stringify(after) === JSON.stringify(counts), `countBits after reopen: expected ${JSON.stringify(counts)}, got ${JSON.stringify(after)}`)
    checkBytes(await again.readShard(3, 0, shardBytesOf(parameters)), copy, 'shard 3 after reopen')
  })
}

/**
 * For stores that declare `capabilities.shared` (Redis): a second handle on the same bits, open at
 * the same time, sees the first one's writes and the first sees its writes.
 */
export function bitStoreSharingTests(options: BitStoreSuiteOptions): void {
  const withStores = storesFor(options)
  const share = options.share!
  withStores('shared: two open handles on the same bits see each other\'s writes', async (make, track) => {
    const store = await make()
    check(store.capabilities.shared, 'a store given `share` must declare capabilities.shared')
    const other = track(await share(store))
    await store.setBits(batchOf(3, [{ shard: 1, positions: [10, 20, 30] }]), new Uint8Array(1))
    const seen = new Uint8Array(1)
    await other.testBits(batchOf(3, [{ shard: 1, positions: [30, 20, 10] }]), seen)
    checkBytes(seen, [1], 'the second handle reading the first one\'s key')
    const added = new Uint8Array(1)
    await other.setBits(batchOf(3, [{ shard: 2, positions: [1, 2, 3] }]), added)
    checkBytes(added, [1], 'a key new to both handles')
    await store.testBits(batchOf(3, [{ shard: 2, positions: [1, 2, 3] }]), seen)
    checkBytes(seen, [1], 'the first handle reading the second one\'s key')
  })
}
