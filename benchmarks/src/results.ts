import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { renderChart } from './charts.js'
import { BENCH_RUNTIME, lineOf, RUNTIMES } from '../../scripts/runtimes/runtimes.mjs'
import { formatBatch, formatOps, markdownTable, runtimeTable, type ChartDescription, type Row } from './report.js'

/** What a run was measured on, printed at the top of RESULTS.md. */
export interface Machine {
  readonly node: string
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly platform: string
  /** The 1-minute load average when the suite started: other work on a shared machine skews figures. */
  readonly loadAverage: number
}

/** One suite's latest full run, as kept in results.json. */
export interface SuiteResult {
  readonly suite: string
  readonly date: string
  readonly commit: string
  readonly machine: Machine
  readonly seconds: number
  readonly rows: readonly Row[]
  readonly charts: readonly ChartDescription[]
}

export function machine(): Machine {
  const cpu = cpus()
  return {
    node: process.version,
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
    loadAverage: Number(loadavg()[0].toFixed(2)),
  }
}

/** The checked-out commit, with `+changes` when the work tree differs from it. */
export function commit(root: URL): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  try {
    const head = git('rev-parse', '--short=12', 'HEAD')
    return git('status', '--porcelain', '--untracked-files=no') === '' ? head : `${head}+changes`
  } catch {
    return 'unknown (not a git checkout)'
  }
}

/** The suites' results kept from earlier runs (a run of one suite replaces only that suite's). */
export function readResults(file: URL): SuiteResult[] {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SuiteResult[]) : []
}

/** Replaces the results of the suites in `fresh`, keeps the others, orders them as `order`. */
export function mergeResults(kept: readonly SuiteResult[], fresh: readonly SuiteResult[], order: readonly string[]): SuiteResult[] {
  const bySuite = new Map(kept.map((result) => [result.suite, result]))
  for (const result of fresh) bySuite.set(result.suite, result)
  const rank = (suite: string) => (order.includes(suite) ? order.indexOf(suite) : order.length)
  return [...bySuite.values()].sort((a, b) => rank(a.suite) - rank(b.suite))
}

/** The Node lines of the runtime table, as prose: '20, 22, 24 and 26'. */
function runtimeLines(): string {
  const lines = RUNTIMES.map((runtime) => String(lineOf(runtime.version)))
  return lines.length > 1 ? `${lines.slice(0, -1).join(', ')} and ${lines.at(-1)}` : lines.join('')
}

const describeMachine = (m: Machine) =>
  `Node ${m.node}, ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}; load average ${m.loadAverage} at the start`

const RUNTIME_TABLE_INTRO = [
  'The hot suites again on each Node line (`benchmarks/src/runtimes.ts`): the same suite code in a fresh child process of each',
  'Node binary, the lines one after another for each suite. A figure after the first column has its ratio to the oldest line\'s beside it.',
  '',
].join('\n')

/**
 * Writes `<folder>/RESULTS.md` and `<folder>/charts/<id>.svg` from the results; returns the chart files.
 * `quick` marks the page as a quick run's.
 */
export async function writeResults(folder: URL, results: readonly SuiteResult[], quick: boolean): Promise<string[]> {
  const chartFolder = new URL('charts/', folder)
  mkdirSync(chartFolder, { recursive: true })
  const rows = results.flatMap((result) => result.rows)
  const charts = new Map(results.flatMap((result) => result.charts.map((chart) => [chart.id, chart] as const)))
  const written: string[] = []
  for (const chart of charts.values()) {
    if (!rows.some((row) => row.chart?.chart === chart.id)) continue
    writeFileSync(new URL(`${chart.id}.svg`, chartFolder), await renderChart(chart, rows))
    written.push(chart.id)
  }

  const lines = [
    quick ? '# Benchmark results (quick run)' : '# Benchmark results',
    '',
    quick
      ? 'Written by `npm run bench -- --quick`: fewer rounds and keys, a first look only. The full figures are in `benchmarks/RESULTS.md`.'
      : 'Written by `npm run bench` (`benchmarks/src/main.ts`); do not edit by hand. How the figures are measured, and how to run one suite: [benchmarks/README.md](README.md).',
    '',
    'Every row says its batch: keys per call of the measured API (1 = single calls). Figures are medians; compare rows of one run only.',
    '',
    `\`npm run bench\` runs on Node ${BENCH_RUNTIME}, the current LTS line; each suite below names the Node it ran on.${results.some((result) => result.suite === 'runtimes') ? ` The [runtimes](#runtimes) table runs the hot suites on Node ${runtimeLines()} side by side.` : ''}`,
    '',
  ]
  for (const result of results) lines.push(`- **${result.suite}**: ${result.date}, commit \`${result.commit}\`, ${result.seconds} s; ${describeMachine(result.machine)}`)
  if (written.length > 0) {
    lines.push('', '## Charts', '')
    for (const id of written) lines.push(`![${charts.get(id)!.title}](charts/${id}.svg)`, '')
  }
  for (const result of results) {
    const byRuntime = result.rows.some((row) => row.runtime !== undefined)
    lines.push('', `## ${result.suite}`, '')
    if (byRuntime) lines.push(RUNTIME_TABLE_INTRO)
    lines.push(byRuntime ? runtimeTable(result.rows) : markdownTable(result.rows))
  }
  writeFileSync(new URL('RESULTS.md', folder), `${lines.join('\n')}\n`)
  return written
}

/** The rows marked `headline`, as the short table the root README shows, and the Node they ran on. */
export function headlineTable(results: readonly SuiteResult[]): string {
  const shown = results.filter((result) => result.rows.some((row) => row.headline !== undefined))
  const lines = ['| what | keys per call | keys/s |', '|---|---:|---:|']
  for (const row of shown.flatMap((result) => result.rows).filter((row) => row.headline !== undefined)) {
    lines.push(`| ${row.headline} | ${formatBatch(row.batch)} | ${formatOps(row.opsPerSecond)} |`)
  }
  const nodes = [...new Set(shown.map((result) => result.machine.node))].join(', ')
  lines.push('', `On Node ${nodes}. Node ${runtimeLines()} side by side on the hot paths: [the runtime table](benchmarks/RESULTS.md#runtimes).`)
  return lines.join('\n')
}

/** Replaces the text between `<!-- results:start -->` and `<!-- results:end -->` in a Markdown file. */
export function replaceMarkedBlock(file: URL, content: string): boolean {
  if (!existsSync(file)) return false
  const text = readFileSync(file, 'utf8')
  const pattern = /(<!-- results:start[^>]*-->\n)[\s\S]*?(<!-- results:end -->)/
  if (!pattern.test(text)) return false
  writeFileSync(file, text.replace(pattern, (_, start: string, end: string) => `${start}${content}\n${end}`))
  return true
}
