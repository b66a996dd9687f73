import { Command } from 'commander'
import { CliError, EXIT } from '../errors.js'
import { integer, maxKeyLengthOption } from '../flags.js'
import { hintKeyThatIsAFile, inputSize, readKeys, type InputCounts } from '../input.js'
import { openFilter } from '../stores.js'
import { parseTarget, refuseRedisFlags } from '../targets.js'

interface CheckOptions {
  name?: string
  timeout: number
  json?: boolean
  keysFile?: string
  maxKeyLength: number
}

export const checkCommand = new Command('check')
  .summary('say for each key whether it is present or absent')
  .description(
    `Checks keys against a filter and prints one line per key: the key, a tab, and "present" or "absent" (or with --json one JSON object per line). Keys come from the arguments, from --keys-file (one per line), or from standard input one per line when there are none or the only one is "-". Exit code: 0 if every key is present, 1 if any is absent, 2 on error. "present" may be a false positive, at the filter's error rate; "absent" is certain.`,
  )
  .argument('<target>', 'file.blmk, level:<folder>, redis://host:port[/db] or redis+cluster://host:port')
  .argument('[keys...]', 'keys to check; none or - reads standard input')
  .option('--name <filter>', 'the filter\'s name (Redis targets)')
  .option('--timeout <ms>', 'Redis: milliseconds per command and connection', integer(1, 2 ** 31 - 1), 5000)
  .option('--keys-file <path>', 'read keys from this file, one per line (- for standard input), instead of the arguments')
  .addOption(maxKeyLengthOption())
  .option('--json', 'print {"key": …, "present": …} per line')
  .addHelpText(
    'after',
    `
Examples:
  $ bloomkit check ids.blmk user:42 user:43
  $ bloomkit check redis://localhost:6379 --name user-ids - < suspects.txt
  $ bloomkit check ids.blmk --keys-file suspects.txt
  $ bloomkit check level:./data/emails --json alice@example.com
  $ bloomkit check ids.blmk user:42 && echo "maybe there"`,
  )
  .action(async (text: string, keys: string[], options: CheckOptions, command: Command) => {
    const target = parseTarget(text, '<target>')
    refuseRedisFlags(command, target, { name: '--name', timeout: '--timeout' }, '<target>')
    if (options.keysFile !== undefined && keys.length > 0) throw new CliError('CLI_USAGE', 'give keys as arguments or with --keys-file, not both')
    const path = options.keysFile ?? (keys.length === 0 || (keys.length === 1 && keys[0] === '-') ? '-' : undefined)
    if (path !== undefined) inputSize(path)
    else hintKeyThatIsAFile('check', keys)
    if (path === '-' && process.stdin.isTTY === true) {
      // A silent wait would look like a hang: say what is awaited.
      process.stderr.write('bloomkit check: reading keys from standard input, one per line; end with Ctrl-D (or give keys as arguments, or --keys-file <path>)\n')
    }
    const opened = await openFilter(target, options)
    let absent = false
    try {
      const print = async (batch: ReadonlyArray<string | Uint8Array>) => {
        const answers = await opened.filter.hasMany(batch)
        const parts: Array<string | Uint8Array> = []
        for (let i = 0; i < batch.length; i++) {
          if (!answers[i]) absent = true
          const key = batch[i]
          if (options.json === true) {
            const shown = typeof key === 'string' ? key : Buffer.from(key).toString('utf8')
            parts.push(`${JSON.stringify({ key: shown, present: answers[i] })}\n`)
          } else {
            parts.push(key, answers[i] ? '\tpresent\n' : '\tabsent\n')
          }
        }
        await write(Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part))))
      }
      if (path !== undefined) {
        const counts: InputCounts = { keys: 0, skipped: 0 }
        for await (const block of readKeys({ path, format: 'lines', maxKeyBytes: options.maxKeyLength }, counts)) {
          if (block.kind === 'list') await print(block.keys)
          else await print(Array.from({ length: block.count }, (_, i) => block.data.subarray(block.starts[i], block.ends[i])))
        }
      } else {
        await print(keys)
      }
    } finally {
      await opened.close()
    }
    process.exitCode = absent ? EXIT.absent : EXIT.ok
  })

function write(bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(bytes, (error) => (error ? reject(error) : resolve()))
  })
}
