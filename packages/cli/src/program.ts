import { readFileSync } from 'node:fs'
import { BloomError } from '@bloomkit/core'
import { Command, CommanderError } from 'commander'
import { buildCommand } from './commands/build.js'
import { checkCommand } from './commands/check.js'
import { copyCommand } from './commands/copy.js'
import { deleteCommand } from './commands/delete.js'
import { inspectCommand } from './commands/inspect.js'
import { removeCommand } from './commands/remove.js'
import { sizeCommand } from './commands/size.js'
import { CliError, codeOf, describeError, EXIT } from './errors.js'
import { interruptedBy, watchSignals } from './signals.js'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

/** The `bloomkit` program, its commands attached. */
export function createProgram(): Command {
  const program = new Command('bloomkit')
    .version(version)
    .description('Size, build, inspect, check, copy and delete bloomkit Bloom filters, and remove keys from counting ones, in snapshot files, LevelDB folders and Redis.')
    .showSuggestionAfterError(true)
    .addHelpText(
      'after',
      `
Targets:
  file.blmk                          a snapshot file (any path)
  level:<folder>                     a LevelDB folder
  redis://[user:pass@]host:port[/db] a Redis server, with --name <filter>  (rediss:// for TLS)
  redis+cluster://host:port[,…]      a Redis Cluster, with --name <filter>

Exit codes:
  0    done (check: every key present)
  1    check: at least one key absent
  2    error: bad arguments or input, target missing or not writable, store failed
  130  interrupted before the commit; the target is left as it was (remove on LevelDB
       or Redis: stopped after the batch in progress, and says how many keys it removed)

Examples:
  $ bloomkit size --capacity 100000000 --error-rate 0.01
  $ bloomkit build ids.txt --out ids.blmk --capacity 10000000 --error-rate 0.01
  $ bloomkit inspect ids.blmk
  $ bloomkit copy ids.blmk redis://localhost:6379 --to-name user-ids
  $ bloomkit check redis://localhost:6379 --name user-ids user:42
  $ bloomkit build ids.txt --out sessions.blmk --counting --capacity 1e6 --error-rate 0.01
  $ bloomkit remove sessions.blmk - < expired.txt`,
    )
  for (const command of [sizeCommand, buildCommand, inspectCommand, checkCommand, copyCommand, removeCommand, deleteCommand]) {
    program.addCommand(command)
    command.showSuggestionAfterError(true)
  }
  // Commander's own errors are printed by `run`, in the one style of every error.
  for (const command of [program, ...program.commands]) command.exitOverride().configureOutput({ outputError: () => {} })
  return program
}

/**
 * A commander usage error as one line: its message without commander's "error: " and with its
 * suggestion ("(Did you mean --out?)") on the same line, and where to read the usage.
 */
function usageLine(error: CommanderError, argv: readonly string[]): string {
  const message = error.message.replace(/^error: /, '').replaceAll(/\s*\n\s*/g, ' ').replace(/\.$/, '')
  const command = argv.slice(2).find((arg) => !arg.startsWith('-'))
  const help = command !== undefined && COMMANDS.includes(command) ? `bloomkit ${command} --help` : 'bloomkit --help'
  return `bloomkit: ${message}; see ${help} [CLI_USAGE]\n`
}

const COMMANDS = ['size', 'build', 'inspect', 'check', 'copy', 'remove', 'delete']

/** Runs the program on `argv` (as `process.argv`) and returns the exit code; errors are printed, never thrown. */
export async function run(argv: readonly string[]): Promise<number> {
  watchSignals()
  const program = createProgram()
  try {
    await program.parseAsync(argv)
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version "fail" with exit code 0; `bloomkit` alone prints the help, an error.
      if (error.exitCode === 0) return EXIT.ok
      if (error.code !== 'commander.help') process.stderr.write(usageLine(error, argv))
      return EXIT.error
    }
    if (interruptedBy() !== undefined || codeOf(error) === 'CLI_INTERRUPTED') {
      process.stderr.write(`bloomkit: interrupted by ${interruptedBy()}; the target is left as it was\n`)
      return EXIT.interrupted
    }
    process.stderr.write(`bloomkit: ${describeError(error)} [${codeOf(error)}]\n`)
    if (!(error instanceof CliError || error instanceof BloomError) && process.env.BLOOMKIT_DEBUG !== undefined) console.error(error)
    return EXIT.error
  }
}
