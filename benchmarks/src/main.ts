// `npm run bench` runs every suite of suites.ts, on Node 24 (the current LTS line: BENCH_RUNTIME in
// scripts/runtimes/runtimes.mjs), and writes benchmarks/RESULTS.md, benchmarks/results.json,
// benchmarks/charts/*.svg and the root README's results table. `node benchmarks/dist/main.js redis`
// (after `pnpm run build`) runs just that suite, on the Node that runs it, and replaces just its part;
// `--quick` writes a first look to benchmarks/quick/ instead. How to add a suite: benchmarks/README.md.
import { writeFileSync } from 'node:fs'
import { sampleQuickly } from './measure.js'
import { Report } from './report.js'
import { commit, headlineTable, machine, mergeResults, readResults, replaceMarkedBlock, writeResults, type SuiteResult } from './results.js'
import { notInQuickRuns, suites } from './suites.js'
import { BENCH_RUNTIME } from '../../scripts/runtimes/runtimes.mjs'

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const only = args.filter((arg) => !arg.startsWith('--'))
const unknown = only.filter((name) => !(name in suites))
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(', ')}; the suites are: ${Object.keys(suites).join(', ')}`)
  process.exit(2)
}
const chosen = Object.keys(suites).filter((name) => (only.length === 0 ? !(quick && notInQuickRuns.has(name)) : only.includes(name)))
if (quick) sampleQuickly()

const benchmarks = new URL('../', import.meta.url)
const root = new URL('../', benchmarks)
const revision = commit(root)
const runtime = process.version === `v${BENCH_RUNTIME}` ? 'the current LTS line, as npm run bench runs it' : `npm run bench runs on Node ${BENCH_RUNTIME}, the current LTS line`
console.log(`bloomkit benchmarks${quick ? ' (quick)' : ''}: ${chosen.join(', ')}; Node ${process.version} (${runtime}), commit ${revision}`)

const report = new Report()
const fresh: SuiteResult[] = []
for (const [index, name] of chosen.entries()) {
  const run = await suites[name]()
  const first = report.rows.length
  const start = performance.now()
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const onMachine = machine()
  report.beginSuite(name, index + 1, chosen.length)
  await run(report, { quick })
  report.endSuite()
  const rows = report.rows.slice(first)
  const charts = [...report.charts.values()].filter((chart) => rows.some((row) => row.chart?.chart === chart.id))
  fresh.push({ suite: name, date, commit: revision, machine: onMachine, seconds: Math.round((performance.now() - start) / 1000), rows, charts })
}

const order = Object.keys(suites)
if (quick) {
  const folder = new URL('quick/', benchmarks)
  const charts = await writeResults(folder, mergeResults([], fresh, order), true)
  console.log(`\nwrote benchmarks/quick/RESULTS.md and ${charts.length} chart(s) in benchmarks/quick/charts/`)
} else {
  const store = new URL('results.json', benchmarks)
  const results = mergeResults(readResults(store), fresh, order)
  writeFileSync(store, `${JSON.stringify(results, null, 1)}\n`)
  const charts = await writeResults(benchmarks, results, false)
  const readme = replaceMarkedBlock(new URL('README.md', root), headlineTable(results))
  console.log(`\nwrote benchmarks/RESULTS.md, benchmarks/results.json, ${charts.length} chart(s) in benchmarks/charts/${readme ? ' and the table in README.md' : ''}`)
}
