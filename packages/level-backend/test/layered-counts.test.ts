import { afterAll, expect, test } from 'vitest'
import { LayeredMemoryFilter } from '@bloomkit/memory-backend/layered'
import { LayeredLevelFilter } from '@bloomkit/level-backend'
import { tempFolders } from './support/temp-folders.js'

// docs/SPEC.md section 8: keys are judged one at a time, so a layer's count (and so which layer a
// key goes into, and the bits) does not depend on how a writer batches them.

const folders = tempFolders()
afterAll(() => folders.removeAll())

// Repeated keys, and a high error rate so that keys often find their bits set by keys before them.
const sequence = Array.from({ length: 1500 }, (_, i) => `c:${(i * 7919) % 1200}`)
const options = { capacity: 50, errorRate: 0.2, growth: 2, seed: 42, layout: 'blocked' as const }

test.each([1, 7, 256, sequence.length])('batches of %i keys give the memory filter’s counts and snapshot', async (size) => {
  const memory = await LayeredMemoryFilter.create(options)
  const expected = memory.addMany(sequence)
  const filter = await LayeredLevelFilter.create(folders.path(), options)
  const answers: boolean[] = []
  for (let at = 0; at < sequence.length; at += size) answers.push(...(await filter.addMany(sequence.slice(at, at + size))))
  expect(answers).toEqual(expected)
  expect((await filter.layers()).map((layer) => layer.count)).toEqual(memory.layers().map((layer) => layer.count))
  expect(memory.layers().length).toBeGreaterThan(3)
  expect(Buffer.from(await filter.export())).toEqual(Buffer.from(memory.export()))
  await filter.close()
})
