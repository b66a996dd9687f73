import { fork } from 'node:child_process'
import { lineOf, runtimeBinary, RUNTIMES } from '../../scripts/runtimes/runtimes.mjs'
import type { SuiteOptions } from './measure.js'
import type { Report, Row } from './report.js'

/**
 * The hot suites the runtime table runs on every Node, and the rows of each it keeps: the hashing
 * suite's measured rows (KeyHasher by key length and shape, the floors, Uint8Array keys) and the
 * memory suite's `has`/`hasMany` rows of bloomkit. Add a suite here to add its rows to the table.
 */
const HOT_SUITES: Record<string, (row: Row) => boolean> = {
  memory: (row) => row.subject === 'bloomkit' && /^has(Many)? /.test(row.task),
  hashing: (row) => row.opsPerSecond > 0,
}

const childUrl = new URL('./runtime-child.js', import.meta.url)

/** Runs one suite in a child process of Node `version` (runtime-child.ts) and resolves to its rows. */
function runInChild(version: string, suite: string, quick: boolean): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    // The child's row-by-row output is left out (the table shows its rows); its errors show.
    const child = fork(childUrl, [suite, ...(quick ? ['--quick'] : [])], { execPath: runtimeBinary(version), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    let rows: Row[] | undefined
    child.once('message', (message) => (rows = message as Row[]))
    child.once('error', reject)
    child.once('exit', (code, signal) =>
      rows !== undefined && code === 0 ? resolve(rows) : reject(new Error(`the ${suite} suite on Node ${version} exited with ${signal ?? code} before sending its rows`)))
  })
}

/**
 * The runtime table: the hot suites' own code run again in a fresh child process of each Node of
 * scripts/runtimes/runtimes.mjs (20, 22, 24 and 26), suite by suite so that a suite's columns are
 * measured minutes apart, not the whole run apart. Each kept row is added with the Node it ran on
 * (`runtime`), and RESULTS.md shows them side by side, so a user sees what upgrading Node gives.
 * The children run with `forRuntimeTable`: the memory suite leaves out bloom-filters and its
 * 100M-key filter, whose rows the table does not keep.
 */
export async function runRuntimeTable(report: Report, { quick }: SuiteOptions): Promise<void> {
  const steps = Object.keys(HOT_SUITES).flatMap((suite) => RUNTIMES.map(({ version }) => ({ suite, version })))
  for (const [step, { suite, version }] of steps.entries()) {
    report.progress(step, steps.length, `the ${suite} suite on Node ${version}`)
    const rows = await runInChild(version, suite, quick)
    for (const row of rows.filter(HOT_SUITES[suite])) {
      report.add({ suite: 'runtimes', task: `${suite}: ${row.task}`, subject: row.subject, batch: row.batch, opsPerSecond: row.opsPerSecond, notes: `Node ${lineOf(version)}`, runtime: version })
    }
  }
}
