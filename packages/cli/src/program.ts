import { readFileSync } from 'node:fs'
import { BloomError } from '@bloomkit/core'
import { Command, CommanderError } from 'commander'
import { buildCommand } from './commands/build.js'
import { checkCommand } from './commands/check.js'
import { copyCommand } from './commands/copy.js'
import { inspectCommand } from './commands/inspect.js'
import { sizeCommand } from './commands/size.js'
import { CliError, codeOf, describeError, EXIT } from './errors.js'
import { interruptedBy, watchSignals } from './signals.js'

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

/** The `bloomkit` program, its commands attached. */
export function createProgram(): Command {
  const program = new Command('bloomkit')
    .version(version)
    .description('Size, build, inspect, check and copy bloomkit Bloom filters in snapshot files, LevelDB folders and Redis.')
    .showHelpAfterError('(add --help for usage and examples)')
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
  130  interrupted; the target is left as it was

Examples:
  $ bloomkit size --capacity 100000000 --error-rate 0.01
  $ bloomkit build ids.txt --out ids.blmk --capacity 10000000 --error-rate 0.01
  $ bloomkit inspect ids.blmk
  $ bloomkit copy ids.blmk redis://localhost:6379 --to-name user-ids
  $ bloomkit check redis://localhost:6379 --name user-ids user:42`,
    )
  for (const command of [sizeCommand, buildCommand, inspectCommand, checkCommand, copyCommand]) {
    program.addCommand(command)
    command.showHelpAfterError('(add --help for usage and examples)').showSuggestionAfterError(true)
  }
  program.exitOverride()
  for (const command of program.commands) command.exitOverride()
  return program
}

/** Runs the program on `argv` (as `process.argv`) and returns the exit code; errors are printed, never thrown. */
export async function run(argv: readonly string[]): Promise<number> {
  watchSignals()
  const program = createProgram()
  try {
    await program.parseAsync(argv)
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version "fail" with exit code 0; commander has printed the usage error already.
      return error.exitCode === 0 ? EXIT.ok : EXIT.error
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
