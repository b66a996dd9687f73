import fc from 'fast-check'
import { expect, test } from 'vitest'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { bothDeployments, uniqueName } from './support/clients.js'

const { redis, cluster } = bothDeployments()

const key = fc.oneof(fc.string({ maxLength: 12 }), fc.uint8Array({ maxLength: 8 }), fc.integer({ min: 0, max: 300 }).map((i) => `k${i}`))
const operation = fc.oneof(
  fc.record({ kind: fc.constant('addMany' as const), keys: fc.array(key, { maxLength: 200 }) }),
  fc.record({ kind: fc.constant('hasMany' as const), keys: fc.array(key, { maxLength: 200 }) }),
  fc.record({ kind: fc.constant('singles' as const), keys: fc.array(key, { maxLength: 20 }), add: fc.boolean() }),
  fc.record({ kind: fc.constant('export' as const) }),
)

const SEED = 20261122

test('model: the Redis filter answers exactly as the memory filter with the same parameters, and never a false negative (seed 20261122)', async () => {
  await fc.assert(
    // scanBytesPerKey: 0 never works on whole shards; 4 reads or ORs a (128-byte) shard whole when
    // a batch has 32 of its keys there; 512 always does here. Otherwise a batch of the blocked
    // layout reads blocks (unless blockReads is false), and the classic one sends BITFIELDs.
    // layout: both bit layouts of the spec, which Redis stores as the meta hash's scheme.
    fc.asyncProperty(
      fc.array(operation, { minLength: 1, maxLength: 8 }),
      fc.boolean(),
      fc.constantFrom(0, 4, 512),
      fc.boolean(),
      fc.constantFrom('blocked' as const, 'classic' as const),
      async (operations, onCluster, scanBytesPerKey, blockReads, layout) => {
        const client = onCluster ? cluster : redis
        // Small and crowded (3 072 bits: three 1024-bit shards), so bits collide and false positives happen.
        const parameters = { bits: 3 * 8 * 128, hashes: 4, shards: 3, seed: 99, layout }
        const filter = await RedisBloomFilter.fromParameters(client, uniqueName('model'), parameters, { scanBytesPerKey, blockReads })
        const memory = await MemoryBloomFilter.fromParameters(parameters)
        const added = new Set<string>()
        const id = (k: string | Uint8Array) => (typeof k === 'string' ? `s:${k}` : `b:${Array.from(k).join(',')}`)
        try {
          for (const op of operations) {
            if (op.kind === 'addMany') {
              expect(await filter.addMany(op.keys)).toEqual(memory.addMany(op.keys))
              op.keys.forEach((k) => added.add(id(k)))
            } else if (op.kind === 'hasMany') {
              const answers = await filter.hasMany(op.keys)
              expect(answers).toEqual(memory.hasMany(op.keys))
              op.keys.forEach((k, i) => added.has(id(k)) && expect(answers[i]).toBe(true))
            } else if (op.kind === 'singles') {
              // All in one tick: coalesced into one command per shard, answered per call.
              const answers = await Promise.all(op.keys.map((k) => (op.add ? filter.add(k) : filter.has(k))))
              if (op.add) {
                // Within one coalesced batch every key is set in order, as addMany does.
                expect(answers).toEqual(memory.addMany(op.keys))
                op.keys.forEach((k) => added.add(id(k)))
              } else {
                expect(answers).toEqual(memory.hasMany(op.keys))
              }
            } else {
              expect(new Uint8Array(await filter.export()).subarray(40)).toEqual(memory.export().subarray(40))
            }
          }
        } finally {
          await filter.destroy()
        }
      },
    ),
    { seed: SEED, numRuns: 60 },
  )
}, 60_000)
