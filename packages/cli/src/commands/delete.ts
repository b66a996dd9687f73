import { rm } from 'node:fs/promises'
import { createInterface } from 'node:readline/promises'
import { Command } from 'commander'
import { redisBackend } from '../backends.js'
import { deletableFile, deletableLevel } from '../deletable.js'
import { clearFileDebris, clearLevelDebris } from '../debris.js'
import { CliError } from '../errors.js'
import { integer } from '../flags.js'
import { requireName } from '../stores.js'
import { closeRedis, connectRedis, parseTarget, redact, refuseRedisFlags, type Target } from '../targets.js'

interface DeleteOptions {
  name?: string
  yes?: boolean
  timeout: number
  quiet?: boolean
}

export const deleteCommand = new Command('delete')
  .summary('delete a filter, and what killed builds left beside it')
  .description(
    `Deletes the filter at <target>: a bloomkit snapshot file, a LevelDB folder that holds a bloomkit filter (and is not open elsewhere), or a Redis filter's meta and shards (also one stuck in an import or rebuild). Anything else (a key list, a text file, another program's database) is refused, named, before anything is asked or deleted. Temporary files and folders that killed builds left beside a file or folder are removed too. Asks first on a terminal; elsewhere pass --yes.`,
  )
  .argument('<target>', 'file.blmk, level:<folder>, redis://host:port[/db] or redis+cluster://host:port')
  .option('--name <filter>', 'the filter\'s name (Redis targets)')
  .option('-y, --yes', 'do not ask (required when standard input is not a terminal)')
  .option('--timeout <ms>', 'Redis: milliseconds per command and connection', integer(1, 2 ** 31 - 1), 5000)
  .option('-q, --quiet', 'print nothing on success')
  .addHelpText(
    'after',
    `
Examples:
  $ bloomkit delete old-ids.blmk
  $ bloomkit delete level:./data/emails --yes
  $ bloomkit delete redis://localhost:6379 --name user-ids --yes`,
  )
  .action(async (text: string, options: DeleteOptions, command: Command) => {
    const target = parseTarget(text, '<target>')
    refuseRedisFlags(command, target, { name: '--name', timeout: '--timeout' }, '<target>')
    const shown = target.kind === 'redis' ? `${redact(text)} (filter "${requireName(options.name)}")` : text
    const say = (message: string) => options.quiet !== true && console.error(message)
    if (target.kind === 'redis') {
      // The library's destroy recognises a Redis filter by its meta hash, and refuses one that is not bloomkit's.
      if (options.yes !== true) await confirm(`delete ${shown}?`)
      say((await removeRedis(target, requireName(options.name), options)) ? `deleted ${shown}` : `nothing to delete at ${shown}`)
      return
    }
    // What killed builds left beside the target goes first (a swap cut short is put back), then the
    // target is recognised as a filter before anyone is asked: anything else is refused, named.
    if (target.kind === 'file') await clearFileDebris(target.path)
    else await clearLevelDebris(target.folder)
    const found = target.kind === 'file' ? await deletableFile(target.path) : await deletableLevel(target.folder)
    if (!found) {
      say(`nothing to delete at ${shown} (temporary leftovers, if any, were removed)`)
      return
    }
    if (options.yes !== true) await confirm(`delete ${shown}?`)
    await rm(target.kind === 'file' ? target.path : target.folder, { recursive: target.kind === 'level', force: true })
    say(`deleted ${shown}`)
  })

async function confirm(question: string): Promise<void> {
  if (process.stdin.isTTY !== true) throw new CliError('CLI_USAGE', `${question.slice(0, -1)}: pass --yes to delete without a terminal to ask on`)
  const prompt = createInterface({ input: process.stdin, output: process.stderr })
  try {
    const answer = await prompt.question(`${question} [y/N] `)
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('CLI_USAGE', 'not deleted: the answer was not yes')
  } finally {
    prompt.close()
  }
}

/**
 * Deletes the Redis filter `name` (any state, also one stuck in an import or rebuild); returns
 * whether there was one. A key under the name itself (`--name` given a Redis key that is not a
 * filter) is refused by name rather than reported as nothing to delete.
 */
async function removeRedis(target: Target & { kind: 'redis' }, name: string, options: DeleteOptions): Promise<boolean> {
  const client = await connectRedis(target, options)
  try {
    const { RedisBloomFilter } = await redisBackend()
    if (await RedisBloomFilter.destroy(client, name, { timeout: options.timeout })) return true
    const type = String(await client.type(name))
    if (type !== 'none') {
      throw new CliError('CLI_TARGET', `${redact(target.url)}: "${name}" is a Redis ${type}, not a bloomkit filter (no filter of that name); nothing deleted`)
    }
    return false
  } finally {
    await closeRedis(client)
  }
}
