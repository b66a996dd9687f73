import { Command } from 'commander'
import { CliError } from '../errors.js'
import { integer } from '../flags.js'
import { plainFromCounting } from '../snapshot-kind.js'
import { openFilter, requireName, verified, writeLevel, writeSnapshotFile } from '../stores.js'
import { writeRedis } from '../redis-writes.js'
import { parseTarget, redact, refuseRedisFlags } from '../targets.js'

interface CopyOptions {
  name?: string
  toName?: string
  replace?: boolean
  ttl?: number
  timeout: number
  plain?: boolean
  quiet?: boolean
}

export const copyCommand = new Command('copy')
  .summary('copy a filter between files, LevelDB folders and Redis')
  .description(
    `Streams a filter from <source> to <target> in the snapshot format, checked against its CRCs before the target is switched to it; a failed copy leaves the target as it was. An existing target is replaced only with --replace (a Redis filter must then be of the same kind; one with other parameters, size or seed, is replaced by the copy in a new generation, switched in one step). A counting filter copies as a counting filter; with --plain, as the plain filter of the same keys (every non-zero counter a set bit, a quarter of the size: e.g. to ship to browsers). A plain filter cannot become a counting one: its bits carry no counts.`,
  )
  .argument('<source>', 'file.blmk, level:<folder>, redis://… or redis+cluster://…')
  .argument('<target>', 'file.blmk, level:<folder>, redis://… or redis+cluster://…')
  .option('--name <filter>', 'the filter\'s name in a Redis source (and target, unless --to-name)')
  .option('--to-name <filter>', 'the filter\'s name in a Redis target')
  .option('--replace', 'replace an existing filter at the target')
  .option('--plain', 'copy a counting filter as a plain filter of the same keys (it can no longer remove keys)')
  .option('--ttl <seconds>', 'Redis target: expire the copy after this many seconds', integer(1, 2 ** 31 - 1))
  .option('--timeout <ms>', 'Redis: milliseconds per command and connection', integer(1, 2 ** 31 - 1), 5000)
  .option('-q, --quiet', 'print nothing on success')
  .addHelpText(
    'after',
    `
Examples:
  $ bloomkit copy redis://localhost:6379 --name user-ids backup/user-ids.blmk
  $ bloomkit copy backup/user-ids.blmk redis+cluster://10.0.0.1:7000 --to-name user-ids
  $ bloomkit copy level:./data/emails emails.blmk --replace
  $ bloomkit copy redis://a:6379 redis://b:6379/2 --name ids --to-name ids-copy
  $ bloomkit copy redis://localhost:6379 --name sessions public/sessions.blmk --plain`,
  )
  .action(async (sourceText: string, targetText: string, options: CopyOptions, command: Command) => {
    const source = parseTarget(sourceText, '<source>')
    const target = parseTarget(targetText, '<target>')
    refuseRedisFlags(command, target, { toName: '--to-name', ttl: '--ttl' }, '<target>')
    if (source.kind !== 'redis') refuseRedisFlags(command, target, { name: '--name', timeout: '--timeout' }, '<target>')
    const targetName = target.kind === 'redis' ? requireName(options.toName ?? options.name, '--to-name (or --name)') : undefined
    const opened = await openFilter(source, options)
    const replace = options.replace === true
    try {
      const counting = opened.counting !== undefined
      if (options.plain === true && !counting) throw new CliError('CLI_USAGE', `--plain copies a counting filter as a plain one; ${redact(sourceText)} is already plain`)
      const source = verified(opened.chunks(), counting ? 'counting' : 'plain')
      const chunks = options.plain === true ? plainFromCounting(source) : source
      // What the target gets: the source's kind, or plain with --plain.
      const kind = counting && options.plain !== true ? 'counting' : 'plain'
      if (target.kind === 'file') await writeSnapshotFile(target.path, chunks, { replace })
      else if (target.kind === 'level') await writeLevel(target.folder, chunks, { replace, kind })
      else await writeRedis(target, targetName!, chunks, { kind, replace, replaceParameters: replace, timeout: options.timeout, ttl: options.ttl })
    } finally {
      await opened.close()
    }
    if (options.quiet !== true) console.error(`copied ${redact(sourceText)} to ${redact(targetText)}${targetName === undefined ? '' : ` (${targetName})`}`)
  })
