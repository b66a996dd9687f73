import { existsSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { layeredFormat, layerPolicies } from '@bloomkit/core/store'
import { LayeredLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { MemoryBloomFilter } from '@bloomkit/memory-backend'
import { childBuildForTests } from './support/child-build.js'
import { runChild } from './support/run-child.js'
import { tempFolders } from './support/temp-folders.js'

const { layerParameters, layerPolicyOf } = layerPolicies

const { encodeLayeredSnapshot } = layeredFormat

// A layered snapshot of many small layers (issue 21): each layer is a LevelDB of its own, and
// 4,000 of them open at once ran out of file descriptors (EMFILE) and left a half-imported folder
// under the target's name that neither opened nor re-imported.

// Transpiling the package for the child takes a while on a busy machine.
const childEntry = childBuildForTests({ beforeAll, afterAll })
const folders = tempFolders('bloomkit-layered-import-')
afterAll(() => folders.removeAll(), 120_000)

const START = Date.UTC(2026, 0, 1)
/** Layers in the import test: past the 128 the pool keeps open, so that one LevelDB each at once would exceed the bound. */
const LAYERS = 400

/** A rotating filter's snapshot of `layers` one-second windows, layer i holding the key `k:<i>`. */
function manyLayers(layers: number): Uint8Array {
  const policy = layerPolicyOf({ capacity: 1, errorRate: 0.01, window: { seconds: 1, keep: layers }, seed: 11 })
  const parameters = layerParameters(policy, 0)
  const first = START / 1000
  return encodeLayeredSnapshot(
    policy,
    Array.from({ length: layers }, (_, i) => {
      const layer = MemoryBloomFilter.fromParametersSync(parameters)
      layer.add(`k:${i}`)
      return { window: first + i, count: 1, snapshot: layer.export() }
    }),
  )
}

/** File descriptors this process holds now (Linux). */
function openFiles(): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      readlinkSync(`/proc/self/fd/${fd}`)
      return true
    } catch {
      return false
    }
  }).length
}

const stagingOf = (target: string) => join(dirname(target), `.${basename(target)}.bloomkit-import`)

describe('LevelDB layered import of many layers', () => {
  // 400 layers rather than the 4,000: the open-file bound is the same (128 layers open at
  // most), and each layer's LevelDB is created with fsyncs, which on this shared machine took over
  // ten minutes for 4,000 (the kill test below starts a 4,000-layer import).
  test('400 layers import and answer with a bounded number of open files (128 layers open at most), and open again', { timeout: 600_000 }, async () => {
    const snapshot = manyLayers(LAYERS)
    const clock = () => START + (LAYERS - 1) * 1000
    const before = openFiles()
    const target = folders.path()
    const filter = await LevelBloomFilter.import(target, snapshot, { clock, kind: 'layered' })
    // 128 layers open at most, each a LevelDB of ~5 descriptors (and a few more for the manifest); not 4,000 × 5.
    expect(openFiles() - before).toBeLessThan(128 * 8 + 50)
    expect((await filter.layers()).length).toBe(LAYERS)
    const keys = Array.from({ length: LAYERS }, (_, i) => `k:${i}`)
    expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
    expect(openFiles() - before).toBeLessThan(128 * 8 + 50)
    expect(existsSync(stagingOf(target))).toBe(false)
    await filter.close()
    expect(openFiles() - before).toBeLessThan(20)

    const again = await LevelBloomFilter.open(target, { clock, kind: 'layered' })
    expect(await again.has(`k:${LAYERS - 1}`)).toBe(true)
    expect(await again.export()).toEqual(snapshot)
    await again.close()
  })
})

describe('a failed or killed layered import leaves nothing half done', () => {
  test('killed part way: no folder under the target name, a second import meanwhile is BLOOM_LOCKED, the next one clears the debris', { timeout: 300_000 }, async () => {
    const target = folders.path()
    const file = join(folders.make(), 'many.snapshot')
    writeFileSync(file, manyLayers(4000))
    const child = runChild(childEntry(), 'import-file', target, { snapshot: file })
    await child.waitFor((line) => line === 'importing')
    const staging = stagingOf(target)
    // Wait until it has written a few dozen layers, then kill it.
    for (let i = 0; i < 600 && !(existsSync(staging) && readdirSync(staging).filter((name) => name.startsWith('L')).length > 30); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(readdirSync(staging).filter((name) => name.startsWith('L')).length).toBeGreaterThan(30)
    const small = manyLayers(5)
    await expect(LevelBloomFilter.import(target, small)).rejects.toMatchObject({ code: 'BLOOM_LOCKED' })
    child.process.kill('SIGKILL')
    const { signal } = await child.exited
    expect(signal).toBe('SIGKILL')

    expect(existsSync(target)).toBe(false)
    expect(existsSync(staging)).toBe(true)
    await expect(LevelBloomFilter.open(target)).rejects.toMatchObject({ code: 'BLOOM_NOT_FOUND' })
    const filter = await LevelBloomFilter.import(target, small, { clock: () => START + 4000, kind: 'layered' })
    expect(await filter.hasMany(['k:0', 'k:4'])).toEqual([true, true])
    await filter.close()
    expect(existsSync(staging)).toBe(false)
  })

  test('into a folder that holds a filter: refused, and that filter is left as it was', async () => {
    const target = folders.path()
    const existing = await LevelBloomFilter.create(target, { capacity: 20, errorRate: 0.01, growth: 2 })
    await existing.addMany(['a', 'b', 'c'])
    await existing.close()
    await expect(LevelBloomFilter.import(target, manyLayers(3))).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
    await expect(LayeredLevelFilter.import(target, manyLayers(3))).rejects.toMatchObject({ code: 'BLOOM_INCOMPATIBLE' })
    const again = await LevelBloomFilter.open(target, { kind: 'layered' })
    expect(await again.hasMany(['a', 'b', 'c'])).toEqual([true, true, true])
    await again.close()
    expect(existsSync(stagingOf(target))).toBe(false)
  })
})
