import { execFile as execFileCallback } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, test } from 'vitest'

const execFile = promisify(execFileCallback)
const example = fileURLToPath(new URL('../example/users-service.mjs', import.meta.url))

// `npm run example:guard` as a first-hour user runs it (issue 37 item 2): it says what PGlite's
// slow start is before it starts, compares the same traffic without the guard and with it, and
// writes a delete as the README teaches (`deleted`, not `invalidate`).
test('the guard example prints its PGlite start first, a baseline without the guard, and uses deleted after a delete', async () => {
  const { stdout } = await execFile(process.execPath, [example], { timeout: 150_000 })
  const lines = stdout.trim().split('\n')
  expect(lines[0]).toMatch(/^PGlite: starting PostgreSQL in-process \(about 20 s\)/)
  expect(lines[1]).toMatch(/^PGlite: ready in [\d.]+ s$/)
  const queries = (label: string) => Number(new RegExp(`^${label}:\\s+5000 requests \\(50 % attack\\) in [\\d.]+ s: 2500 users found, (\\d+) database queries$`).exec(lines.find((line) => line.startsWith(label)) ?? '')?.[1])
  expect(queries('without the guard')).toBe(5000)
  // The filter stops the attack's 2500 requests; the cache most repeats of the hot users.
  expect(queries('with the guard')).toBeLessThan(2500)
  expect(lines).toContain('after delete + deleted: null')
  expect(stdout).not.toMatch(/after delete \+ invalidate/)
}, 180_000)
