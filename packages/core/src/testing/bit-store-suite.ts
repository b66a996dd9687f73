import type { BitStore } from '../bit-store.js'
import { BloomError } from '../errors.js'
import { shardBitsOf, shardBytesOf, type FilterParameters } from '../parameters.js'
import { PositionBatch } from '../position-batch.js'

/** The test runner's `test` (vitest, node:test, …): only its name-and-body form is used. */
export type TestFunction = (name: string, body: () => Promise<void>, timeout?: number) => void

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
}

class SuiteFailure extends Error {
  override name = 'BitStoreSuiteFailure'
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new SuiteFailure(message)
}

function checkBytes(actual: Uint8Array, expected: ArrayLike<number>, what: string): void {
  check(actual instanceof Uint8Array, `${what}: expected a Uint8Array`)
  check(actual.length === expected.length, `${what}: expected ${expected.length} bytes, got ${actual.length}`)
  for (let i = 0; i < expected.length; i++) {
    check(actual[i] === expected[i], `${what}: byte ${i} is ${actual[i]}, expected ${expected[i]}`)
  }
}

function batchOf(hashes: number, keys: Array<{ shard: number; positions: number[] }>): PositionBatch {
  const batch = new PositionBatch(keys.length, hashes)
  keys.forEach(({ shard, positions }, i) => {
    batch.shards[i] = shard
    batch.positions.set(positions, i * hashes)
  })
  batch.size = keys.length
  return batch
}

/** A deterministic spread of keys over every shard (xorshift, so the suite itself is reproducible). */
function spreadKeys(parameters: FilterParameters, count: number, seed: number) {
  let x = seed >>> 0 || 1
  const next = () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
  const shardBits = shardBitsOf(parameters)
  return Array.from({ length: count }, (_, i) => ({
    shard: i % parameters.shards,
    positions: Array.from({ length: parameters.hashes }, () => Math.floor(next() * shardBits)),
  }))
}

/**
 * The BitStore contract as tests. Every store runs it (a few lines per backend), and core runs it
 * on its reference store. Needs no particular test runner: pass `test`.
 *
 * @example
 * import { test } from 'vitest'
 * bitStoreSuite({ test, factory: (parameters) => new MemoryBitStore(parameters) })
 */
export function bitStoreSuite(options: BitStoreSuiteOptions): void {
  const { test, factory, cleanup, timeout, name = 'BitStore' } = options
  const small: FilterParameters = { bits: 4 * 1024, hashes: 3, shards: 4, seed: 0, layout: 'classic' }

  const withStores = (title: string, body: (make: (p?: FilterParameters) => Promise<BitStore>) => Promise<void>) => {
    test(
      `${name}: ${title}`,
      async () => {
        const stores: BitStore[] = []
        const make = async (parameters: FilterParameters = small) => {
          const store = await factory(parameters)
          stores.push(store)
          return store
        }
        try {
          await body(make)
        } finally {
          for (const store of stores) await store.close()
          await cleanup?.(stores)
        }
      },
      timeout,
    )
  }

  withStores('declares its capabilities and parameters', async (make) => {
    const store = await make()
    for (const capability of ['sync', 'persistent', 'shared'] as const) {
      check(typeof store.capabilities[capability] === 'boolean', `capabilities.${capability} must be a boolean`)
    }
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
    const parameters: FilterParameters = { bits: 64 * 8192, hashes: 7, shards: 64, seed: 0, layout: 'classic' }
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
    const store = await make({ bits: 16 * 4096, hashes: 5, shards: 16, seed: 0, layout: 'classic' })
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
