import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { importCircles, sourceGraph } from '../../test-support/source-graph.js'

// No package's src/ has an import circle, type-only ones included (issue 34 item 4): imports run one
// way, from a package's door down through its rooms, so each module can be read without the ones
// that import it. TypeScript's own pre-processor lists the imports, so this takes well under a second.

const packages = fileURLToPath(new URL('../../packages/', import.meta.url))

/** A circle as its modules, rotated to start at the smallest name, so that one circle has one spelling. */
function spelled(circle: readonly string[]): string {
  const modules = circle.slice(0, -1)
  const start = modules.indexOf([...modules].sort()[0])
  const rotated = [...modules.slice(start), ...modules.slice(0, start)]
  return [...rotated, rotated[0]].join(' → ')
}

describe('import circles', () => {
  for (const name of readdirSync(packages)) {
    test(`packages/${name}/src has none`, () => {
      expect(importCircles(sourceGraph(join(packages, name, 'src'))).map(spelled)).toEqual([])
    })
  }

  test('a circle of type-only imports is found, and named by its modules', () => {
    const root = mkdtempSync(join(tmpdir(), 'bloomkit-circles-'))
    try {
      mkdirSync(join(root, 'rooms'))
      writeFileSync(join(root, 'door.ts'), "import type { Room } from './rooms/room.js'\nexport type Door = { room: Room }\n")
      writeFileSync(join(root, 'rooms', 'room.ts'), "import type { Door } from '../door.js'\nexport type Room = { door: Door }\n")
      writeFileSync(join(root, 'rooms', 'hall.ts'), "export { type Room } from './room.js'\n")
      expect(importCircles(sourceGraph(root)).map(spelled)).toEqual(['door.ts → rooms/room.ts → door.ts'])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
