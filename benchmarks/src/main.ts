// `npm run bench` runs every suite below and writes benchmarks/RESULTS.md, benchmarks/results.json,
// benchmarks/charts/*.svg and the root README's results table. `node benchmarks/dist/main.js redis`
// (after `pnpm run build`) runs just that suite and replaces just its part; `--quick` writes a
// first look to benchmarks/quick/ instead. How to add a suite: benchmarks/README.md.
import { writeFileSync } from 'node:fs'
import { sampleQuickly, type Suite } from './measure.js'
import { Report } from './report.js'
import { commit, headlineTable, machine, mergeResults, readResults, replaceMarkedBlock, writeResults, type SuiteResult } from './results.js'

/**
 * The suites, in the order a full run takes them; add a suite with one line.
 * Each module is loaded only when its turn comes: merely importing ioredis halved the memory suite's
 * throughput (bloomkit's and bloomfilter's alike) in this process. The memory suite goes first, as in
 * a process with one kind of key: the hashing suite feeds the same hash function strings of every
 * length and shape and Uint8Arrays, and V8's feedback from that cost bloomkit ~20 % in a memory suite
 * run after it.
 */
const suites: Record<string, () => Promise<Suite>> = {
  memory: async () => (await import('./memory.js')).runMemoryBenchmarks,
  hashing: async () => (await import('./hashing.js')).runHashingBenchmarks,
  level: async () => (await import('./level.js')).runLevelBenchmarks,
  redis: async () => (await import('./redis.js')).runRedisBenchmarks,
  cli: async () => (await import('./cli.js')).runCliBenchmarks,
  guard: async () => (await import('./guard.js')).runGuardBenchmarks,
  layered: async () => (await import('./layered.js')).runLayeredBenchmarks,
  counting: async () => (await import('./counting.js')).runCountingBenchmarks,
  accuracy: async () => (await import('./accuracy.js')).runAccuracyBenchmarks,
}

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const only = args.filter((arg) => !arg.startsWith('--'))
const unknown = only.filter((name) => !(name in suites))
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(', ')}; the suites are: ${Object.keys(suites).join(', ')}`)
  process.exit(2)
}
const chosen = Object.keys(suites).filter((name) => only.length === 0 || only.includes(name))
if (quick) sampleQuickly()

const benchmarks = new URL('../', import.meta.url)
const root = new URL('../', benchmarks)
const revision = commit(root)
console.log(`bloomkit benchmarks${quick ? ' (quick)' : ''}: ${chosen.join(', ')}; Node ${process.version}, commit ${revision}`)

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
