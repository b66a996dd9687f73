// Runs only the Redis suite: `node benchmarks/dist/redis-main.js` after `pnpm run build`.
import { runRedisBenchmarks } from './redis.js'
import { Report } from './report.js'

const report = new Report()
console.log(`bloomkit Redis benchmarks — Node ${process.version}, ${new Date().toISOString()}`)
await runRedisBenchmarks(report)
console.log(`\n${report.toMarkdown()}`)
