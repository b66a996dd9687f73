import { BloomError, type CountingBloomFilter } from '@bloomkit/core'
import { Command, Option } from 'commander'
import { CliError, EXIT } from '../errors.js'
import { integer, maxKeyLengthOption } from '../flags.js'
import { hintKeyThatIsAFile, inputSize, readKeys, type InputCounts, type InputFormat, type KeyBlock } from '../input.js'
import { settleSignals } from '../signals.js'
import { openFilter, writeSnapshotFile } from '../stores.js'
import { parseTarget, redact, refuseRedisFlags, type Target } from '../targets.js'

interface RemoveOptions {
  name?: string
  timeout: number
  keysFile?: string
  format: InputFormat
  column?: string
  header?: boolean
  maxKeyLength: number
  json?: boolean
  quiet?: boolean
}

export const removeCommand = new Command('remove')
  .summary('remove keys from a counting filter')
  .description(
    `Removes keys from a counting filter (one built with build --counting): each key that reads present has its counters decremented; a key that reads absent changes nothing and is counted as absent. Keys come from the arguments, from --keys-file, or from standard input when there are none or the only one is "-" (one per line, or --format csv/jsonl as in build).

Remove only keys you added: removing a key that was never added but reads present (a false positive) decrements counters of keys that were added, and can make them read absent. A key added n times stays present until removed n times; a counter that reached 15 stays there, so such keys stay for good.

A snapshot file is rewritten whole once every key is removed (a failure or interruption leaves it as it was). LevelDB and Redis filters remove keys batch by batch as they are read: an interruption stops after the batch in progress, and the summary says how many were removed.`,
  )
  .argument('<target>', 'file.blmk, level:<folder>, redis://host:port[/db] or redis+cluster://host:port')
  .argument('[keys...]', 'keys to remove; none or - reads standard input')
  .option('--name <filter>', 'the filter\'s name (Redis targets)')
  .option('--timeout <ms>', 'Redis: milliseconds per command and connection', integer(1, 2 ** 31 - 1), 5000)
  .option('--keys-file <path>', 'read keys from this file (- for standard input; .gz decompressed), instead of the arguments')
  .addOption(new Option('--format <format>', 'how keys are laid out in the keys file or standard input').choices(['lines', 'csv', 'jsonl']).default('lines'))
  .option('--column <column>', 'csv: column number (from 1) or header name; jsonl: field name (default: the line is a JSON string, or its "key" field)')
  .option('--header', 'csv: the first row is a header (implied by a --column name)')
  .addOption(maxKeyLengthOption())
  .option('--json', 'print the summary as JSON on standard output')
  .option('-q, --quiet', 'print nothing on success')
  .addHelpText(
    'after',
    `
Examples:
  $ bloomkit remove sessions.blmk session:42 session:43
  $ bloomkit remove redis://localhost:6379 --name sessions --keys-file expired.txt
  $ psql -Atc 'select id from deleted_users' | bloomkit remove level:./data/users -`,
  )
  .action(async (text: string, keys: string[], options: RemoveOptions, command: Command) => {
    const target = parseTarget(text, '<target>')
    refuseRedisFlags(command, target, { name: '--name', timeout: '--timeout' }, '<target>')
    if (options.keysFile !== undefined && keys.length > 0) throw new CliError('CLI_USAGE', 'give keys as arguments or with --keys-file, not both')
    const path = options.keysFile ?? (keys.length === 0 || (keys.length === 1 && keys[0] === '-') ? '-' : undefined)
    if (path !== undefined) inputSize(path)
    else hintKeyThatIsAFile('remove', keys)
    const opened = await openFilter(target, options)
    const tally = { keys: 0, removed: 0, skipped: 0 }
    let interrupted: CliError | undefined
    try {
      const filter = opened.counting
      if (filter === undefined) {
        throw new BloomError(
          'BLOOM_INCOMPATIBLE',
          `${target.kind === 'redis' ? redact(target.text) : target.text} holds a plain Bloom filter, which cannot remove keys (its bits carry no counts); build a counting one with bloomkit build --counting`,
        )
      }
      if (path === '-' && process.stdin.isTTY === true) {
        process.stderr.write('bloomkit remove: reading keys from standard input, one per line; end with Ctrl-D (or give keys as arguments, or --keys-file <path>)\n')
      }
      try {
        if (path === undefined) await removeBatch(filter, keys, tally)
        else {
          const counts: InputCounts = { keys: 0, skipped: 0 }
          const input = { path, format: options.format, column: options.column, header: options.header, maxKeyBytes: options.maxKeyLength }
          for await (const block of readKeys(input, counts)) await removeBatch(filter, keysOf(block), tally)
          tally.skipped = counts.skipped
        }
        // An input cut short by Ctrl-C (the producer died first) must not be taken for a whole one.
        if (target.kind === 'file') await settleSignals()
      } catch (error) {
        if (target.kind === 'file' || !(error instanceof CliError && error.code === 'CLI_INTERRUPTED')) {
          if (target.kind !== 'file' && tally.removed > 0) process.stderr.write(`bloomkit remove: ${tally.removed} key(s) were removed before this error\n`)
          throw error
        }
        interrupted = error
      }
      // A file is rewritten whole, through a temporary file renamed over it: all of the removals or none.
      if (target.kind === 'file') await writeSnapshotFile(target.path, filter.exportChunks(), { replace: true })
    } finally {
      await opened.close()
    }
    report(target, text, options, tally, interrupted)
  })

/** Removes one batch of keys and counts the answers. */
async function removeBatch(filter: CountingBloomFilter, keys: ReadonlyArray<string | Uint8Array>, tally: { keys: number; removed: number }): Promise<void> {
  if (keys.length === 0) return
  const answers = await filter.removeMany(keys)
  tally.keys += keys.length
  for (const removed of answers) if (removed) tally.removed++
}

function keysOf(block: KeyBlock): ReadonlyArray<string | Uint8Array> {
  if (block.kind === 'list') return block.keys
  return Array.from({ length: block.count }, (_, i) => block.data.subarray(block.starts[i], block.ends[i]))
}

function report(target: Target, text: string, options: RemoveOptions, tally: { keys: number; removed: number; skipped: number }, interrupted: CliError | undefined): void {
  const shown = target.kind === 'redis' ? `${redact(text)} (${options.name})` : text
  const absent = tally.keys - tally.removed
  if (interrupted !== undefined) {
    process.stderr.write(`bloomkit: ${interrupted.message.replace(/; the target is left as it was$/, '')} after ${tally.removed} key(s) were removed from ${shown}; the keys after them were not [CLI_INTERRUPTED]\n`)
    process.exitCode = EXIT.interrupted
    return
  }
  if (options.json === true) {
    console.log(JSON.stringify({ target: target.kind === 'redis' ? redact(text) : text, name: options.name, keys: tally.keys, removed: tally.removed, absent, skipped: tally.skipped }, null, 2))
  } else if (options.quiet !== true) {
    const number = (n: number) => n.toLocaleString('en-US')
    console.error(`removed ${number(tally.removed)} of ${number(tally.keys)} key(s) from ${shown}${absent > 0 ? `; ${number(absent)} read absent (nothing changed for them)` : ''}`)
  }
}
