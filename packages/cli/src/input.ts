import { createReadStream, statSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { createGunzip } from 'node:zlib'
import { parse as parseCsv } from 'csv-parse'
import { CliError } from './errors.js'

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
}

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

function openInput(path: string, onBytes: OnBytes): Readable {
  const raw: Readable = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: 1 << 20 })
  raw.on('data', (chunk: Buffer) => onBytes(chunk.length))
  if (!path.endsWith('.gz')) return raw
  const gunzip = createGunzip({ chunkSize: 1 << 20 })
  raw.on('error', (error) => gunzip.destroy(error))
  return raw.pipe(gunzip)
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
export function readKeys(options: InputOptions, counts: InputCounts, onBytes: OnBytes = () => {}): AsyncGenerator<KeyBlock> {
  const stream = openInput(options.path, onBytes)
  if (options.format === 'lines') return guarded(options.path, lineBlocks(stream, counts))
  if (options.format === 'csv') return guarded(options.path, csvBlocks(stream, options, counts))
  return guarded(options.path, jsonlBlocks(stream, options, counts))
}

const NEWLINE = 0x0a
const RETURN = 0x0d

/** Splits bytes on `\n` (dropping a `\r` before it), skipping empty lines; a last line without `\n` counts. */
async function* lineBlocks(stream: AsyncIterable<Buffer>, counts: InputCounts): AsyncGenerator<KeyBlock> {
  let starts: Int32Array = new Int32Array(1 << 16)
  let ends: Int32Array = new Int32Array(1 << 16)
  let carry: Buffer | undefined
  const block = (data: Uint8Array, count: number): KeyBlock => ({ kind: 'ranges', data, starts, ends, count })
  for await (const chunk of stream) {
    const data = carry === undefined ? chunk : Buffer.concat([carry, chunk])
    let count = 0
    let start = 0
    for (let newline = data.indexOf(NEWLINE); newline !== -1; newline = data.indexOf(NEWLINE, start)) {
      const end = newline > start && data[newline - 1] === RETURN ? newline - 1 : newline
      if (end > start) {
        if (count === starts.length) {
          starts = grow(starts)
          ends = grow(ends)
        }
        starts[count] = start
        ends[count++] = end
      } else {
        counts.skipped++
      }
      start = newline + 1
    }
    carry = start < data.length ? data.subarray(start) : undefined
    counts.keys += count
    if (count > 0) yield block(data, count)
  }
  if (carry !== undefined) {
    const end = carry[carry.length - 1] === RETURN ? carry.length - 1 : carry.length
    if (end > 0) {
      starts[0] = 0
      ends[0] = end
      counts.keys++
      yield block(carry, 1)
    } else {
      counts.skipped++
    }
  }
}

function grow(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2)
  bigger.set(array)
  return bigger
}

const LIST_BLOCK = 8192

async function* csvBlocks(stream: Readable, options: InputOptions, counts: InputCounts): AsyncGenerator<KeyBlock> {
  const column = options.column ?? '1'
  const byNumber = /^\d+$/.test(column)
  const index = byNumber ? Number(column) - 1 : -1
  if (byNumber && index < 0) throw new CliError('CLI_USAGE', `--column must be a column number from 1 or a header name; got "${column}"`)
  // Buffers, not strings: a key's bytes are hashed as they are, so invalid UTF-8 is kept distinct
  // and `check` (which reads raw lines) finds it.
  const parser = stream.pipe(parseCsv({ encoding: null, bom: true, relax_column_count: true, skip_empty_lines: true, info: true }))
  stream.on('error', (error) => parser.destroy(error))
  let position = index
  let headerPending = !byNumber || options.header === true
  let keys: Uint8Array[] = []
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Buffer[]; info: { lines: number } }>) {
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
    if (typeof code === 'string' && code.startsWith('CSV_')) throw new CliError('CLI_INPUT', `malformed CSV: ${(error as Error).message}`, { cause: error })
    throw error
  }
  counts.keys += keys.length
  if (keys.length > 0) yield { kind: 'list', keys, count: keys.length }
}

async function* jsonlBlocks(stream: AsyncIterable<Buffer>, options: InputOptions, counts: InputCounts): AsyncGenerator<KeyBlock> {
  const field = options.column
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let keys: string[] = []
  let line = 0
  const lines: InputCounts = { keys: 0, skipped: 0 }
  for await (const block of lineBlocks(stream, lines)) {
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
