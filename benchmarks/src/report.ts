/** One measured line of the benchmark table. */
export interface Row {
  /** Which suite: 'memory', 'hashing', 'redis', 'level'. */
  readonly suite: string
  /** What was measured, e.g. 'has 1M keys'. */
  readonly task: string
  /** Whose implementation: 'bloomkit', 'bloomfilter@1.1.0', 'raw LevelDB batch()', … */
  readonly subject: string
  /** Median throughput in operations (keys) per second; 0 for a row that only carries notes (a ratio). */
  readonly opsPerSecond: number
  /** Free-form extras: bytes, false-positive rate, ratio to a peer, RSS … */
  readonly notes?: string
}

/** Collects rows from every suite and prints them as one table at the end. */
export class Report {
  readonly rows: Row[] = []

  add(row: Row): void {
    this.rows.push(row)
    console.log(`  ${row.suite} | ${row.task} | ${row.subject} | ${formatOps(row.opsPerSecond)} ops/s | ${row.notes ?? ''}`)
  }

  /** A Markdown table, the same one the README quotes. */
  toMarkdown(): string {
    const lines = ['| suite | task | subject | ops/s | ns/op | notes |', '|---|---|---|---:|---:|---|']
    for (const r of this.rows) {
      const ns = r.opsPerSecond > 0 ? (1e9 / r.opsPerSecond).toFixed(1) : '–'
      lines.push(`| ${r.suite} | ${r.task} | ${r.subject} | ${formatOps(r.opsPerSecond)} | ${ns} | ${r.notes ?? ''} |`)
    }
    return lines.join('\n')
  }
}

export function formatOps(ops: number): string {
  if (ops === 0) return '–'
  if (ops >= 1e6) return `${(ops / 1e6).toFixed(2)} M`
  if (ops >= 1e3) return `${(ops / 1e3).toFixed(1)} k`
  return ops.toFixed(1)
}
