import { createReadStream, statSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { CliError } from './errors.js'
import { checkInterrupted, interruptedError, onInterrupt } from './signals.js'

/** How keys are laid out in the input. */
export type InputFormat = 'lines' | 'csv' | 'jsonl'

/** Where keys come from and how to read them. */
export interface InputOptions {
  /** A file path, or `-` for standard input. A path ending in `.gz` is decompressed. */
  readonly path: string
  readonly format: InputFormat
  /**
   * Which value is the key: for `csv` a 1-based column number or a header name (then the first row
   * is a header); for `jsonl` a field name (default: the line must be a JSON string, or an object
   * with a `key` field). Ignored for `lines`.
   */
  readonly column?: string
  /** For `csv` with a numbered column: the first row is a header, skip it. */
  readonly header?: boolean
  /**
   * A line (a CSV record of one field) that ends the input: it is not a key, nothing may follow it,
   * and {@link InputCounts.endMarker} says whether it was seen.
   */
  readonly endMarker?: string
  /** The longest key (line, CSV record) in bytes; longer fails with `CLI_INPUT`. Default {@link DEFAULT_MAX_KEY_BYTES}. */
  readonly maxKeyBytes?: number
}

/** Default longest key: far above any ID, far below what would exhaust memory. */
export const DEFAULT_MAX_KEY_BYTES = 1 << 20

/**
 * A run of keys read from the input. `ranges`: key i is `data[starts[i] … ends[i])` (lines, no copy);
 * `list`: the keys themselves. Valid only until the next block is requested.
 */
export type KeyBlock =
  | { readonly kind: 'ranges'; readonly data: Uint8Array; readonly starts: Int32Array; readonly ends: Int32Array; readonly count: number }
  | { readonly kind: 'list'; readonly keys: ReadonlyArray<string | Uint8Array>; readonly count: number }

/** Called as input bytes (compressed bytes for `.gz`) are read. */
export type OnBytes = (bytes: number) => void

/** What a pass over the input counted. */
export interface InputCounts {
  /** Keys handed on. */
  keys: number
  /** Blank lines or empty values skipped. */
  skipped: number
  /** Whether the input's {@link InputOptions.endMarker} was read. */
  endMarker?: boolean
}

/** The input's size in bytes (undefined for standard input), after checking that it is a readable file. */
export function inputSize(path: string): number | undefined {
  if (path === '-') return undefined
  let stats
  try {
    stats = statSync(path)
  } catch (error) {
    throw new CliError('CLI_INPUT', `input "${path}" cannot be read`, { cause: error })
  }
  if (!stats.isFile()) throw new CliError('CLI_INPUT', `input "${path}" is not a file`)
  return stats.size
}

/**
 * Says on standard error when a key given as an argument is also a file here: `check ids.blmk
 * keys.txt` checks the key "keys.txt", where a file of keys was most likely meant. The key is still
 * taken as given (a key may well look like a file name); the hint names --keys-file.
 */
export function hintKeyThatIsAFile(command: string, keys: readonly string[]): void {
  const file = keys.find((key) => key !== '-' && statSync(key, { throwIfNoEntry: false })?.isFile() === true)
  if (file === undefined) return
  process.stderr.write(`bloomkit ${command}: "${file}" is taken as a key, though a file of that name is here; to read keys from it, give --keys-file ${file}\n`)
}

function openInput(path: string, onBytes: OnBytes): Readable {
  const raw: Readable = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: 1 << 20 })
  raw.on('data', (chunk: Buffer) => onBytes(chunk.length))
  if (!path.endsWith('.gz')) return raw
  const gunzip = createGunzip({ chunkSize: 1 << 20 })
  raw.on('error', (error) => gunzip.destroy(error))
  return raw.pipe(gunzip)
}

/** Keys of `source`, ending with the interruption error as soon as SIGINT/SIGTERM arrives, even while the input is silent. */
async function* interruptible<T>(stream: Readable, source: AsyncIterable<T>): AsyncGenerator<T> {
  const stop = onInterrupt((signal) => stream.destroy(interruptedError(signal)))
  try {
    checkInterrupted()
    yield* source
  } finally {
    stop()
  }
}

/** Wraps a read or decompression failure as a `CLI_INPUT` error naming the input. */
async function* guarded<T>(path: string, source: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    yield* source
  } catch (error) {
    if (error instanceof CliError) throw error
    const name = path === '-' ? 'standard input' : `input "${path}"`
    throw new CliError('CLI_INPUT', `${name} cannot be read`, { cause: error })
  }
}

/**
 * Reads every key of the input once, in blocks, with memory bounded by the read size (1 MiB) and
 * the longest line. Counts go to `counts`.
 * @throws CliError `CLI_INPUT` for an unreadable input, a bad gzip stream or a malformed record.
 */
export async function* readKeys(options: InputOptions, counts: InputCounts, onBytes: OnBytes = () => {}): AsyncGenerator<KeyBlock> {
  // The CSV parser is loaded for CSV input only (~40 ms of start-up that lines and JSON never use),
  // and before the input opens: once flowing, the stream's chunks would pass by while it loads.
  const parseCsv = options.format === 'csv' ? (await import('csv-parse')).parse : undefined
  const stream = openInput(options.path, onBytes)
  const lines = { marker: markerBytes(options.endMarker), maxKeyBytes: options.maxKeyBytes ?? DEFAULT_MAX_KEY_BYTES }
  const blocks =
    options.format === 'lines'
      ? lineBlocks(stream, counts, lines)
      : parseCsv !== undefined
        ? csvBlocks(parseCsv, stream, options, counts, lines.maxKeyBytes)
        : jsonlBlocks(stream, options, counts, lines)
  yield* guarded(options.path, interruptible(stream, blocks))
}

const NEWLINE = 0x0a
const RETURN = 0x0d

function markerBytes(marker: string | undefined): Buffer | undefined {
  if (marker === undefined) return undefined
  if (marker === '' || /[\r\n]/.test(marker)) throw new CliError('CLI_USAGE', '--end-marker must be a non-empty line (no line breaks)')
  return Buffer.from(marker, 'utf8')
}

/** How {@link lineBlocks} reads lines. */
interface LineOptions {
  /** The end-of-input line, if any. */
  readonly marker: Buffer | undefined
  readonly maxKeyBytes: number
}

function tooLong(line: number, maxKeyBytes: number): CliError {
  return new CliError('CLI_INPUT', `line ${line} is longer than --max-key-length (${maxKeyBytes} bytes); raise it if such keys are meant`)
}

/**
 * Splits bytes on `\n` (dropping a `\r` before it), skipping empty lines; a last line without `\n`
 * counts. A line's pieces are joined only once its newline arrives, so a long line costs time in
 * proportion to its length, and reading stops as soon as it passes `maxKeyBytes`.
 */
async function* lineBlocks(stream: AsyncIterable<Buffer>, counts: InputCounts, options: LineOptions): AsyncGenerator<KeyBlock> {
  const { marker, maxKeyBytes } = options
  let starts: Int32Array = new Int32Array(1 << 16)
  let ends: Int32Array = new Int32Array(1 << 16)
  /** The start of the line not yet ended, in pieces. */
  let pending: Buffer[] = []
  let pendingBytes = 0
  let line = 0
  const block = (data: Uint8Array, count: number): KeyBlock => ({ kind: 'ranges', data, starts, ends, count })
  /** Whether the line `data[start … end)` is a key; counts the blank lines and the marker. */
  const isKey = (data: Uint8Array, start: number, end: number): boolean => {
    line++
    if (end - start > maxKeyBytes) throw tooLong(line, maxKeyBytes)
    if (end === start) {
      counts.skipped++
      return false
    }
    if (counts.endMarker === true) throw new CliError('CLI_INPUT', `line ${line} follows the --end-marker line; the marker must be the last line`)
    if (marker !== undefined && end - start === marker.length && marker.equals(data.subarray(start, end))) {
      counts.endMarker = true
      return false
    }
    return true
  }
  for await (const chunk of stream) {
    if (chunk.indexOf(NEWLINE) === -1) {
      pending.push(chunk)
      pendingBytes += chunk.length
      // + 1: a line of exactly maxKeyBytes may still get its \r.
      if (pendingBytes > maxKeyBytes + 1) throw tooLong(line + 1, maxKeyBytes)
      continue
    }
    const data = pending.length === 0 ? chunk : Buffer.concat([...pending, chunk])
    let count = 0
    let start = 0
    for (let newline = data.indexOf(NEWLINE); newline !== -1; newline = data.indexOf(NEWLINE, start)) {
      const end = newline > start && data[newline - 1] === RETURN ? newline - 1 : newline
      if (isKey(data, start, end)) {
        if (count === starts.length) {
          starts = grow(starts)
          ends = grow(ends)
        }
        starts[count] = start
        ends[count++] = end
      }
      start = newline + 1
    }
    pending = start < data.length ? [data.subarray(start)] : []
    pendingBytes = data.length - start
    if (pendingBytes > maxKeyBytes + 1) throw tooLong(line + 1, maxKeyBytes)
    counts.keys += count
    if (count > 0) yield block(data, count)
  }
  if (pending.length > 0) {
    const carry = pending[0]
    const end = carry[carry.length - 1] === RETURN ? carry.length - 1 : carry.length
    if (isKey(carry, 0, end)) {
      starts[0] = 0
      ends[0] = end
      counts.keys++
      yield block(carry, 1)
    }
  }
}

function grow(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2)
  bigger.set(array)
  return bigger
}

const LIST_BLOCK = 8192

async function* csvBlocks(parseCsv: typeof import('csv-parse').parse, stream: Readable, options: InputOptions, counts: InputCounts, maxKeyBytes: number): AsyncGenerator<KeyBlock> {
  const column = options.column ?? '1'
  const byNumber = /^\d+$/.test(column)
  const index = byNumber ? Number(column) - 1 : -1
  if (byNumber && index < 0) throw new CliError('CLI_USAGE', `--column must be a column number from 1 or a header name; got "${column}"`)
  // Buffers, not strings: a key's bytes are hashed as they are, so invalid UTF-8 is kept distinct
  // and `check` (which reads raw lines) finds it.
  const marker = options.endMarker
  const parser = stream.pipe(parseCsv({ encoding: null, bom: true, relax_column_count: true, skip_empty_lines: true, info: true, max_record_size: maxKeyBytes }))
  stream.on('error', (error) => parser.destroy(error))
  let position = index
  let headerPending = !byNumber || options.header === true
  let keys: Uint8Array[] = []
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Buffer[]; info: { lines: number } }>) {
      if (counts.endMarker === true) throw new CliError('CLI_INPUT', `CSV line ${info.lines} follows the --end-marker line; the marker must be the last line`)
      if (marker !== undefined && record.length === 1 && record[0].toString('utf8') === marker) {
        counts.endMarker = true
        continue
      }
      if (headerPending) {
        headerPending = false
        if (!byNumber) {
          position = record.findIndex((field) => field.toString('utf8') === column)
          if (position === -1) {
            throw new CliError('CLI_INPUT', `--column "${column}" is not in the CSV header (${record.map((field) => JSON.stringify(field.toString('utf8'))).join(', ')})`)
          }
        }
        continue
      }
      if (position >= record.length) {
        throw new CliError('CLI_INPUT', `CSV line ${info.lines} has ${record.length} column(s); --column ${column} needs ${position + 1}`)
      }
      const field = record[position]
      if (field.length === 0) {
        counts.skipped++
        continue
      }
      keys.push(field)
      if (keys.length === LIST_BLOCK) {
        counts.keys += keys.length
        yield { kind: 'list', keys, count: keys.length }
        keys = []
      }
    }
  } catch (error) {
    if (error instanceof CliError) throw error
    const code = (error as { code?: unknown }).code
    if (code === 'CSV_MAX_RECORD_SIZE') throw new CliError('CLI_INPUT', `a CSV record is longer than --max-key-length (${maxKeyBytes} bytes)`, { cause: error })
    if (typeof code === 'string' && code.startsWith('CSV_')) throw new CliError('CLI_INPUT', `malformed CSV: ${(error as Error).message}`, { cause: error })
    throw error
  }
  counts.keys += keys.length
  if (keys.length > 0) yield { kind: 'list', keys, count: keys.length }
}

async function* jsonlBlocks(stream: AsyncIterable<Buffer>, options: InputOptions, counts: InputCounts, lineOptions: LineOptions): AsyncGenerator<KeyBlock> {
  const field = options.column
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let keys: string[] = []
  let line = 0
  const lines: InputCounts = { keys: 0, skipped: 0 }
  for await (const block of lineBlocks(stream, lines, lineOptions)) {
    if (block.kind !== 'ranges') continue
    for (let i = 0; i < block.count; i++) {
      line++
      let text: string
      try {
        text = decoder.decode(block.data.subarray(block.starts[i], block.ends[i]))
      } catch (error) {
        throw new CliError('CLI_INPUT', `JSON line ${line} is not valid UTF-8`, { cause: error })
      }
      const key = keyOfJson(text, field, line)
      if (key === '') {
        counts.skipped++
        continue
      }
      keys.push(key)
    }
    counts.keys += keys.length
    if (keys.length > 0) yield { kind: 'list', keys, count: keys.length }
    keys = []
  }
  counts.skipped += lines.skipped
  counts.endMarker = lines.endMarker
}

function keyOfJson(text: string, field: string | undefined, line: number): string {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new CliError('CLI_INPUT', `JSON line ${line} is not valid JSON: ${(error as Error).message}`, { cause: error })
  }
  if (field === undefined && typeof value === 'string') return value
  const name = field ?? 'key'
  const key = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined
  if (typeof key === 'string') return key
  if (typeof key === 'number' && Number.isFinite(key)) return String(key)
  throw new CliError(
    'CLI_INPUT',
    `JSON line ${line} has no string or number field "${name}"${field === undefined ? ' (and is not a JSON string; choose the field with --column)' : ''}`,
  )
}
