import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { LayeredRedisFilter } from '@bloomkit/redis-backend'
import { clusterClient, standaloneClient, uniqueName } from './support/clients.js'

// Issue 33, items 1 and 2 (docs/SPEC.md 9.8): instances that hold a layered filter's list of
// layers while another instance rebuilds it. Every instance, in this process or another, must read
// the list again when it finds it out of date, answer on (no BLOOM_DATA_LOST for layers the list
// dropped), and never answer "not new" from a layer the rebuild is about to drop.

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL('..', import.meta.url))
const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}:${i}`)

beforeAll(async () => {
  // The other process runs the built package; build it (a no-op when dist is current).
  await run('npx', ['tsc', '-b', '.'], { cwd: packageDir })
}, 120_000)

/** A LayeredRedisFilter opened in a child process, kept open (with its list) between requests. */
class OtherProcess {
  private readonly waiting: Array<(reply: { answers?: boolean[]; error?: string; message?: string }) => void> = []
  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => this.waiting.shift()?.(JSON.parse(line)))
  }

  static async open(cluster: boolean, name: string): Promise<OtherProcess> {
    const nodes = cluster ? inject('redisCluster') : [inject('redisStandalone')]
    const child = spawn('node', ['test/support/layered-instance-worker.mjs', JSON.stringify({ cluster, nodes, name })], { cwd: packageDir, stdio: ['pipe', 'pipe', 'inherit'] })
    const other = new OtherProcess(child)
    await new Promise((resolve, reject) => {
      other.waiting.push(resolve)
      child.once('exit', (code) => reject(new Error(`the other process exited with ${code} before it was ready`)))
    })
    return other
  }

  /** Its answers, or the error code it got (as `Error(code)`). */
  async call(op: 'add' | 'has', keys: string[]): Promise<boolean[]> {
    const reply = await new Promise<{ answers?: boolean[]; error?: string; message?: string }>((resolve) => {
      this.waiting.push(resolve)
      this.child.stdin!.write(JSON.stringify({ op, keys }) + '\n')
    })
    if (reply.answers === undefined) throw new Error(`${reply.error}: ${reply.message}`)
    return reply.answers
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve))
    this.child.stdin!.end()
    await exited
  }
}

/** Whether the list holds a rebuilt layer: an entry of index 0 after its first (9.8, Adding step 1). */
async function rebuildListed(client: { hget(key: string, field: string): Promise<string | null> }, name: string): Promise<boolean> {
  const layers = String((await client.hget(`${name}:meta`, 'layers')) ?? '')
  return layers.split(',').some((entry, i) => i > 0 && entry.split('/')[2] === '0')
}

describe.each([
  ['standalone', false],
  ['Cluster', true],
] as const)('%s', (_, cluster) => {
  const redis = cluster ? clusterClient() : standaloneClient()
  const other = cluster ? clusterClient() : standaloneClient()
  afterAll(async () => {
    await Promise.all([redis.quit(), other.quit()])
  })

  test('after each of three rebuilds, instances opened before it (here and in another process) answer on and find every key, and their adds are found by all', async () => {
    const name = uniqueName('rebuild-instances')
    const rebuilder = await LayeredRedisFilter.create(redis, name, { capacity: 500, errorRate: 0.01, growth: 2, seed: 41 })
    await rebuilder.addMany(keys('old', 2000))
    const here = await LayeredRedisFilter.open(other, name)
    expect((await here.hasMany(keys('old', 2000))).every(Boolean)).toBe(true)
    const there = await OtherProcess.open(cluster, name)
    try {
      expect((await there.call('has', keys('old', 2000))).every(Boolean)).toBe(true)
      for (let round = 1; round <= 3; round++) {
        const source = keys(`source${round}`, 3000)
        await rebuilder.rebuild(source)
        // Both still hold the list from before the rebuild, whose layers are now destroyed.
        expect((await here.hasMany(source)).every(Boolean), `round ${round}, this process`).toBe(true)
        expect((await there.call('has', source)).every(Boolean), `round ${round}, the other process`).toBe(true)
        const ours = keys(`here${round}`, 200)
        const theirs = keys(`there${round}`, 200)
        expect((await here.addMany(ours)).filter(Boolean).length).toBeGreaterThan(190)
        expect((await there.call('add', theirs)).filter(Boolean).length).toBeGreaterThan(190)
        for (const filter of [rebuilder, here]) expect((await filter.hasMany([...source, ...ours, ...theirs])).every(Boolean)).toBe(true)
        expect((await there.call('has', [...source, ...ours, ...theirs])).every(Boolean)).toBe(true)
        await rebuilder.rebuild([...source, ...ours, ...theirs])
        // The other methods of a stale instance read the list again too.
        expect((await here.layers()).map((layer) => layer.capacity)).toEqual([3400])
        expect(await here.estimateCount()).toBe(await rebuilder.estimateCount())
        expect(Buffer.from(await here.export())).toEqual(Buffer.from(await rebuilder.export()))
      }
    } finally {
      await there.close()
    }
    await here.close()
    await rebuilder.destroy()
  }, 120_000)

  test('while one instance rebuilds over and over, another checks, adds, exports and asks its error rate in loops: every call answers, and keys every rebuild keeps are always found', async () => {
    const name = uniqueName('rebuild-race')
    const rebuilder = await LayeredRedisFilter.create(redis, name, { capacity: 500, errorRate: 0.01, growth: 2, seed: 43 })
    const kept = keys('kept', 300)
    await rebuilder.addMany(kept)
    const here = await LayeredRedisFilter.open(other, name)
    let rebuilding = true
    const rebuilds = (async () => {
      try {
        for (let round = 0; round < 25; round++) await rebuilder.rebuild([...kept, ...keys(`round${round}`, 1000)])
      } finally {
        rebuilding = false
      }
    })()
    // Each kind of call in its own loop, so that each meets the rebuilds at many points of theirs.
    const failures: string[] = []
    const calls = { hasMany: 0, has: 0, addMany: 0, export: 0, errorRate: 0 }
    const loop = async (kind: keyof typeof calls, call: () => Promise<unknown>) => {
      for (; rebuilding; calls[kind]++) await call().catch((error: unknown) => failures.push(`${kind}: ${(error as Error).stack}`))
    }
    await Promise.all([
      loop('hasMany', async () => expect((await here.hasMany(kept)).every(Boolean)).toBe(true)),
      loop('has', async () => expect(await here.has(kept[calls.has % kept.length])).toBe(true)),
      // Keys added meanwhile may be dropped by the next rebuild (its source leaves them out): only errors count here.
      loop('addMany', () => here.addMany(keys(`added${calls.addMany}`, 100))),
      loop('export', () => here.export()),
      loop('errorRate', () => here.errorRate()),
      rebuilds,
    ])
    console.log(`calls during 25 rebuilds: ${JSON.stringify(calls)}`)
    for (const failure of failures) console.log(failure)
    expect(failures).toEqual([])
    expect(Buffer.from(await here.export())).toEqual(Buffer.from(await rebuilder.export()))
    await here.close()
    await rebuilder.destroy()
  }, 120_000)

  test('keys an instance with the list from before re-adds while a rebuild fills its layer are answered new and found once the old layers are dropped', async () => {
    const name = uniqueName('rebuild-readd')
    const rebuilder = await LayeredRedisFilter.create(redis, name, { capacity: 1000, errorRate: 0.0001, growth: 2, seed: 42 })
    const again = keys('again', 200)
    await rebuilder.addMany([...keys('old', 2000), ...again])
    const here = await LayeredRedisFilter.open(other, name)
    expect((await here.hasMany(again)).every(Boolean)).toBe(true)
    const there = await OtherProcess.open(cluster, name)
    try {
      expect((await there.call('has', again)).every(Boolean)).toBe(true)
      // The source leaves out the keys re-added below: only those adds can keep them.
      const source = keys('source', 100_000)
      const rebuilt = rebuilder.rebuild(source)
      while (!(await rebuildListed(redis, name))) await new Promise((resolve) => setTimeout(resolve, 1))
      // Both hold the list from before: the old layers hold every key of `again`, the rebuilt one none
      // (but for its false positives, at most 1e-4 of them).
      const [ours, theirs] = await Promise.all([here.addMany(again.slice(0, 100)), there.call('add', again.slice(100))])
      const stillFilling = await rebuildListed(redis, name)
      console.log(`re-adds done ${stillFilling ? 'while the rebuilt layer was being filled' : 'after the rebuild ended'}`)
      expect(ours.filter(Boolean).length).toBeGreaterThanOrEqual(98)
      expect(theirs.filter(Boolean).length).toBeGreaterThanOrEqual(98)
      await rebuilt
      expect(await rebuildListed(redis, name)).toBe(false)
      // Acknowledged adds, so found by every instance now that the old layers are gone.
      for (const filter of [rebuilder, here]) expect((await filter.hasMany(again)).every(Boolean)).toBe(true)
      expect((await there.call('has', again)).every(Boolean)).toBe(true)
      expect((await here.addMany(again)).some(Boolean)).toBe(false)
    } finally {
      await there.close()
    }
    await here.close()
    await rebuilder.destroy()
  }, 120_000)
})
