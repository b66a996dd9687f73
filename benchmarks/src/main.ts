import { writeFileSync } from 'node:fs'
import { Report } from './report.js'

const report = new Report()
// `node benchmarks/dist/main.js memory redis` runs just those suites.
const only = process.argv.slice(2)
const wanted = (suite: string) => only.length === 0 || only.includes(suite)

console.log(`bloomkit benchmarks — Node ${process.version}, ${new Date().toISOString()}`)
// Each suite's module is loaded only when its turn comes: merely importing ioredis halved the
// memory suite's throughput (bloomkit's and bloomfilter's alike) in this process.
if (wanted('hashing')) await (await import('./hashing.js')).runHashingBenchmarks(report)
if (wanted('memory')) await (await import('./memory.js')).runMemoryBenchmarks(report)
if (wanted('level')) await (await import('./level.js')).runLevelBenchmarks(report)
if (wanted('redis')) await (await import('./redis.js')).runRedisBenchmarks(report)

const table = report.toMarkdown()
console.log(`\n${table}`)
writeFileSync(new URL('../results.md', import.meta.url), `${table}\n`)
