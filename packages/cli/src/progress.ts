import type cliProgress from 'cli-progress'

/** Whether to draw a progress bar: `--progress` forces it, `--quiet` silences it, else only on a terminal. */
export function progressWanted(options: { progress?: boolean; quiet?: boolean }): boolean {
  if (options.quiet === true) return false
  return options.progress === true || process.stderr.isTTY === true
}

/** Bytes as "12.3 MiB". */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`
}

/** A count as "1.2M", "34.5k". */
function formatCount(value: number): string {
  if (value >= 1e9) return `${(value / 1e9).toFixed(2)}G`
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)}M`
  if (value >= 1e4) return `${(value / 1e3).toFixed(1)}k`
  return String(Math.round(value))
}

/**
 * The bar `build` draws on standard error (cli-progress): keys, keys/s, bytes read and ETA. Over
 * several passes, the bar runs over all of them (each pass re-reads the input). Standard input has
 * no known size: then it shows counts and rates without a bar or ETA.
 */
export class BuildProgress {
  private readonly bar: cliProgress.SingleBar | undefined
  private readonly started = Date.now()
  private bytes = 0
  private keys = 0
  private keysBefore = 0
  private pass = 1

  /**
   * A progress display; cli-progress is loaded only when a bar is drawn (`bar`), so that a
   * build into a file or a pipe pays nothing for it (about 45 ms of start-up here).
   */
  static async start({ bar, inputBytes, passes }: { readonly bar: boolean; readonly inputBytes: number | undefined; readonly passes: number }): Promise<BuildProgress> {
    return new BuildProgress(bar ? (await import('cli-progress')).default : undefined, inputBytes, passes)
  }

  private constructor(
    bars: typeof cliProgress | undefined,
    private readonly inputBytes: number | undefined,
    private readonly passes: number,
  ) {
    if (bars === undefined) return
    const known = inputBytes !== undefined && inputBytes > 0
    this.bar = new bars.SingleBar({
      stream: process.stderr,
      noTTYOutput: true,
      notTTYSchedule: 1000,
      fps: 5,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
      format: known
        ? '{bar} {percentage}% | {keys} keys | {rate} keys/s | {read} of {size}{passes} | ETA {eta_formatted}'
        : '{keys} keys | {rate} keys/s | {read} read{passes}',
    })
    this.bar.start(known ? inputBytes * passes : 1, 0, this.payload())
  }

  /** Input bytes read (compressed bytes for a .gz file). */
  addBytes(bytes: number): void {
    this.bytes += bytes
    this.update()
  }

  /** Keys read so far in this pass. */
  setKeys(keys: number): void {
    this.keys = keys
  }

  /** Starts pass `pass` (1-based). */
  setPass(pass: number): void {
    this.keysBefore += this.keys
    this.keys = 0
    this.pass = pass
  }

  stop(): void {
    this.bar?.update(this.bytes, this.payload())
    this.bar?.stop()
  }

  private update(): void {
    if (this.bar === undefined) return
    this.bar.update(this.bar.getTotal() > 1 ? this.bytes : 0, this.payload())
  }

  private payload(): Record<string, string> {
    const seconds = Math.max(0.001, (Date.now() - this.started) / 1000)
    const size = this.inputBytes ?? 0
    return {
      keys: formatCount(this.keys),
      rate: formatCount((this.keysBefore + this.keys) / seconds),
      read: formatBytes(this.passes > 1 ? this.bytes - (this.pass - 1) * size : this.bytes),
      size: formatBytes(size),
      passes: this.passes > 1 ? ` | pass ${this.pass} of ${this.passes}` : '',
    }
  }
}
