// Runs only the LevelDB suite: `node benchmarks/dist/level-main.js` after `pnpm run build`.
// BENCH_LEVEL_SIZES=1000000 limits the sizes (comma-separated) for a quick run.
import { runLevelBenchmarks } from './level.js'
import { Report } from './report.js'

const report = new Report()
const sizes = process.env.BENCH_LEVEL_SIZES?.split(',').map(Number)
console.log(`bloomkit LevelDB benchmarks — Node ${process.version}, ${new Date().toISOString()}`)
const start = performance.now()
await runLevelBenchmarks(report, sizes)
console.log(`\n${report.toMarkdown()}`)
console.log(`\n(${((performance.now() - start) / 1000).toFixed(0)} s)`)
