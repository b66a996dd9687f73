import { writeFileSync } from 'node:fs'
import { runHashingBenchmarks } from './hashing.js'
import { runLevelBenchmarks } from './level.js'
import { runMemoryBenchmarks } from './memory.js'
import { runRedisBenchmarks } from './redis.js'
import { Report } from './report.js'

const report = new Report()
// `node benchmarks/dist/main.js memory redis` runs just those suites.
const only = process.argv.slice(2)
const wanted = (suite: string) => only.length === 0 || only.includes(suite)

console.log(`bloomkit benchmarks — Node ${process.version}, ${new Date().toISOString()}`)
if (wanted('hashing')) await runHashingBenchmarks(report)
if (wanted('memory')) await runMemoryBenchmarks(report)
if (wanted('level')) await runLevelBenchmarks(report)
if (wanted('redis')) await runRedisBenchmarks(report)

const table = report.toMarkdown()
console.log(`\n${table}`)
writeFileSync(new URL('../results.md', import.meta.url), `${table}\n`)
