import { writeFileSync } from 'node:fs'
import { runHashingBenchmarks } from './hashing.js'
import { runMemoryBenchmarks } from './memory.js'
import { Report } from './report.js'

const report = new Report()
const only = process.argv.slice(2)
const wanted = (suite: string) => only.length === 0 || only.includes(suite)

console.log(`bloomkit benchmarks — Node ${process.version}, ${new Date().toISOString()}`)
if (wanted('hashing')) await runHashingBenchmarks(report)
if (wanted('memory')) await runMemoryBenchmarks(report)

const table = report.toMarkdown()
console.log(`\n${table}`)
writeFileSync(new URL('../results.md', import.meta.url), `${table}\n`)
