#!/usr/bin/env node
// `npm run bench`: runs the benchmark (benchmarks/dist/main.js, with this script's arguments) on
// BENCH_RUNTIME, the current LTS line (runtimes.mjs says why), whatever Node runs npm, so that the
// figures of every machine come from the same runtime. `node benchmarks/dist/main.js` runs it on
// the Node at hand instead.
import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import { fileURLToPath } from 'node:url'
import { BENCH_RUNTIME, runtimeBinary } from './runtimes.mjs'

const main = fileURLToPath(new URL('../../benchmarks/dist/main.js', import.meta.url))
const child = spawn(runtimeBinary(BENCH_RUNTIME), [main, ...process.argv.slice(2)], { stdio: 'inherit' })
// Ctrl-C reaches the benchmark through the terminal's process group: wait for it to stop.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)))
