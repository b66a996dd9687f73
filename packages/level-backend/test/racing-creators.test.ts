import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { childBuildForTests } from './support/child-build.js'
import { runChild, type Child } from './support/run-child.js'
import { tempFolders } from './support/temp-folders.js'

// Processes racing to create one new folder. A loser that looks while the winner's LevelDB is
// still making its files used to see "a folder of other files" and report BLOOM_CORRUPT_STORE for a
// healthy folder (about 1 in 30 losers), and an operator told "corrupt" deletes the folder.
// Child processes, since one process must never open a location twice (shared/NOTES.md).

const folders = tempFolders()
const childEntry = childBuildForTests({ beforeAll, afterAll })
afterAll(() => folders.removeAll())

describe('racing creators', () => {
  test('4 processes creating one new folder, 100 times: each opens the filter (with one seed) or gets BLOOM_LOCKED, never BLOOM_CORRUPT_STORE', async () => {
    const children: Child[] = Array.from({ length: 4 }, () => runChild(childEntry(), 'race', ''))
    const outcomes = new Map<string, number>()
    try {
      for (let round = 0; round < 100; round++) {
        const folder = folders.path()
        for (const child of children) child.process.stdin!.write(`go ${folder}\n`)
        const seeds = new Set<string>()
        for (const child of children) {
          const line = await child.waitFor((l) => l.startsWith(`result ${round} `))
          const result = line.slice(`result ${round} `.length)
          const code = result.startsWith('ok ') ? 'ok' : (JSON.parse(result) as { code: string }).code
          if (code === 'ok') seeds.add(result.slice(3))
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1)
          expect(['ok', 'BLOOM_LOCKED'], `round ${round}: ${result}`).toContain(code)
        }
        // Created without a seed, each racer picked its own random one; those that opened the
        // filter all work with the one stored in the folder.
        expect(seeds.size, `round ${round}: seeds ${[...seeds].join(', ')}`).toBe(1)
        expect([...seeds][0]).not.toBe('0')
      }
    } finally {
      for (const child of children) child.process.stdin!.end()
      await Promise.all(children.map((child) => child.exited))
    }
    console.log(`racing creators: ${JSON.stringify(Object.fromEntries(outcomes))}`)
    expect(outcomes.get('ok')).toBeGreaterThanOrEqual(100)
  }, 60_000)
})
