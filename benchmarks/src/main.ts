import { writeFileSync } from 'node:fs'
import { Report } from './report.js'

const report = new Report()
// `node benchmarks/dist/main.js memory redis` runs just those suites.
const only = process.argv.slice(2)
const wanted = (suite: string) => only.length === 0 || only.includes(suite)

console.log(`bloomkit benchmarks — Node ${process.version}, ${new Date().toISOString()}`)
// Each suite's module is loaded only when its turn comes: merely importing ioredis halved the
// memory suite's throughput (bloomkit's and bloomfilter's alike) in this process.
// The memory suite goes first, as in a process with one kind of key: the hashing suite feeds the
// same hash function strings of every length and shape and Uint8Arrays, and V8's feedback from that
// cost bloomkit ~20 % in a memory suite run after it (1M: 1.03x bloomfilter instead of 1.2-1.3x).
if (wanted('memory')) await (await import('./memory.js')).runMemoryBenchmarks(report)
if (wanted('hashing')) await (await import('./hashing.js')).runHashingBenchmarks(report)
if (wanted('level')) await (await import('./level.js')).runLevelBenchmarks(report)
if (wanted('redis')) await (await import('./redis.js')).runRedisBenchmarks(report)
if (wanted('cli')) await (await import('./cli.js')).runCliBenchmarks(report)
if (wanted('guard')) await (await import('./guard.js')).runGuardBenchmarks(report)
if (wanted('layered')) await (await import('./layered.js')).runLayeredBenchmarks(report)

const table = report.toMarkdown()
console.log(`\n${table}`)
writeFileSync(new URL('../results.md', import.meta.url), `${table}\n`)
