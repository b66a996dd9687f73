/** Where a row sits in a chart: which chart, which bar group, which bar. */
export interface ChartSpot {
  /** The chart's id, also its file name: `benchmarks/charts/<chart>.svg`. Describe it once with `Report.describeChart`. */
  readonly chart: string
  /** The bar group (one line of the chart), e.g. 'has, 1M keys'. */
  readonly group: string
  /** The bar within the group; the row's subject when left out. */
  readonly series?: string
}

/** One measured line of a suite's table. */
export interface Row {
  /** Which suite: 'memory', 'hashing', 'redis', 'level', … */
  readonly suite: string
  /** What was measured, e.g. 'has 1M keys'. */
  readonly task: string
  /** Whose implementation: 'bloomkit', 'bloomfilter@1.1.0', 'raw LevelDB batch()', … */
  readonly subject: string
  /**
   * Keys per call of the measured API: 1 for single calls (`has(key)`), 1000 for `hasMany` of
   * 1000 keys. The table prints it beside every figure, because the two differ by orders of magnitude.
   */
  readonly batch: number
  /** Median throughput in operations (keys) per second; 0 for a row that only carries notes (a ratio). */
  readonly opsPerSecond: number
  /** Free-form extras: bytes, false-positive rate, ratio to a peer, RSS … */
  readonly notes?: string
  /** Draw this row in a chart. */
  readonly chart?: ChartSpot
  /** Show this row in the root README's results table under this short label (keep the whole table ≤ 8 rows). */
  readonly headline?: string
  /**
   * The Node version the row was measured on, e.g. '22.23.3', for rows of the runtime table
   * (runtimes.ts): RESULTS.md shows such rows side by side, a column per version.
   */
  readonly runtime?: string
}

/** A chart the suites draw rows into. */
export interface ChartDescription {
  readonly id: string
  /** The title above the chart. */
  readonly title: string
  /** A line under the title: what the bars measure and on what. */
  readonly subtitle?: string
}

/**
 * Collects the rows of a run, says on the console what runs and how far it got, and hands the rows
 * to main.ts, which writes RESULTS.md and the charts. Suites call `add`, `progress` and `describeChart`.
 */
export class Report {
  readonly rows: Row[] = []
  readonly charts = new Map<string, ChartDescription>()
  #suite = ''
  #suiteStart = 0
  #lastProgressLine = 0
  readonly #interactive = process.stdout.isTTY === true

  /** main.ts calls this before each suite, so progress lines name it. */
  beginSuite(name: string, index: number, count: number): void {
    this.#suite = name
    this.#suiteStart = performance.now()
    console.log(`\n▶ ${name} (suite ${index} of ${count})`)
  }

  /** main.ts calls this after each suite. */
  endSuite(): void {
    this.#clearProgress()
    console.log(`✔ ${this.#suite} in ${this.#elapsed()}`)
  }

  add(row: Row): void {
    this.rows.push(row)
    this.#clearProgress()
    console.log(`  ${row.task} | ${row.subject} | batch ${formatBatch(row.batch)} | ${formatOps(row.opsPerSecond)} ops/s${row.notes ? ` | ${row.notes}` : ''}`)
  }

  /**
   * Says how far the running suite got: `done` of `total` steps, now on `what`. On a terminal it
   * rewrites one status line; in a log it prints a line at most every 5 seconds.
   */
  progress(done: number, total: number, what: string): void {
    const line = `  … ${this.#suite} ${Math.floor((done / total) * 100)} % (${done}/${total}) ${what} · ${this.#elapsed()}`
    if (this.#interactive) {
      process.stdout.write(`\r\x1b[2K${line.slice(0, (process.stdout.columns ?? 120) - 1)}`)
      this.#lastProgressLine = 1
    } else if (performance.now() - this.#lastProgressLine > 5000) {
      console.log(line)
      this.#lastProgressLine = performance.now()
    }
  }

  /** Names a chart that rows point at with `chart: { chart: id, … }`. */
  describeChart(description: ChartDescription): void {
    this.charts.set(description.id, description)
  }

  /** The rows of one suite as a Markdown table. */
  toMarkdown(suite?: string): string {
    const rows = suite === undefined ? this.rows : this.rows.filter((r) => r.suite === suite)
    return markdownTable(rows)
  }

  #clearProgress(): void {
    if (this.#interactive && this.#lastProgressLine === 1) process.stdout.write('\r\x1b[2K')
    this.#lastProgressLine = 0
  }

  #elapsed(): string {
    return `${((performance.now() - this.#suiteStart) / 1000).toFixed(0)} s`
  }
}

/** Rows as a Markdown table: task, batch, subject, ops/s, ns per op, notes. */
export function markdownTable(rows: readonly Row[]): string {
  const lines = ['| task | batch | subject | ops/s | ns/op | notes |', '|---|---:|---|---:|---:|---|']
  for (const r of rows) {
    const ns = r.opsPerSecond > 0 ? (1e9 / r.opsPerSecond).toFixed(1) : '–'
    lines.push(`| ${r.task} | ${formatBatch(r.batch)} | ${r.subject} | ${formatOps(r.opsPerSecond)} | ${ns} | ${r.notes ?? ''} |`)
  }
  return lines.join('\n')
}

/**
 * Rows measured on several Node versions (`runtime`) as one Markdown table: a row per task, subject
 * and batch, a column of ops/s per version (oldest first), each after the first with its ratio to it.
 */
export function runtimeTable(rows: readonly Row[]): string {
  const versions = [...new Set(rows.map((r) => r.runtime ?? ''))].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
  const lines = [
    `| task | batch | subject | ${versions.map((v) => `Node ${v}`).join(' | ')} |`,
    `|---|---:|---|${versions.map(() => '---:').join('|')}|`,
  ]
  const byLine = new Map<string, Map<string, number>>()
  for (const r of rows) {
    const key = JSON.stringify([r.task, formatBatch(r.batch), r.subject])
    if (!byLine.has(key)) byLine.set(key, new Map())
    byLine.get(key)!.set(r.runtime ?? '', r.opsPerSecond)
  }
  for (const [key, figures] of byLine) {
    const [task, batch, subject] = JSON.parse(key) as string[]
    const first = figures.get(versions[0])
    const cells = versions.map((v, i) => {
      const ops = figures.get(v)
      if (ops === undefined) return '–'
      return i === 0 || first === undefined || first === 0 ? formatOps(ops) : `${formatOps(ops)} (${(ops / first).toFixed(2)}×)`
    })
    lines.push(`| ${task} | ${batch} | ${subject} | ${cells.join(' | ')} |`)
  }
  return lines.join('\n')
}

/** 1 → '1', 1000 → '1k', 100 000 → '100k'. */
export function formatBatch(batch: number): string {
  if (batch >= 1e6 && batch % 1e6 === 0) return `${batch / 1e6}M`
  if (batch >= 1e3 && batch % 1e3 === 0) return `${batch / 1e3}k`
  return String(batch)
}

export function formatOps(ops: number): string {
  if (ops === 0) return '–'
  if (ops >= 1e6) return `${(ops / 1e6).toFixed(2)} M`
  if (ops >= 1e3) return `${(ops / 1e3).toFixed(1)} k`
  return ops.toFixed(1)
}
