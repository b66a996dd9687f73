// One hot suite of the runtime table, alone in this process: a child process that runtimes.ts starts
// with one of the Node binaries of scripts/runtimes/runtimes.mjs. Runs the suite's own code as main.ts
// would (with `forRuntimeTable`), then sends its rows back over the IPC channel.
import { sampleQuickly } from './measure.js'
import { Report } from './report.js'
import { suites } from './suites.js'

const [name, ...flags] = process.argv.slice(2)
const quick = flags.includes('--quick')
if (quick) sampleQuickly()
const report = new Report()
await (await suites[name]())(report, { quick, forRuntimeTable: true })
process.send!(report.rows, () => process.disconnect())
