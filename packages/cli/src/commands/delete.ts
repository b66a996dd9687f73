import { existsSync, statSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline/promises'
import { BloomError } from '@bloomkit/core'
import { Command } from 'commander'
import { levelBackend, redisBackend } from '../backends.js'
import { clearFileDebris, clearLevelDebris } from '../debris.js'
import { CliError } from '../errors.js'
import { integer } from '../flags.js'
import { folderNotFile, requireName } from '../stores.js'
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
    `Deletes the filter at <target>: a snapshot file, a LevelDB folder (only one that is a LevelDB folder and not open elsewhere), or a Redis filter's meta and shards (also one stuck in an import or rebuild). Temporary files and folders that killed builds left beside a file or folder are removed too. Asks first on a terminal; elsewhere pass --yes.`,
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
    if (options.yes !== true) await confirm(`delete ${shown}?`)
    const deleted = await remove(target, options)
    if (options.quiet !== true) console.error(deleted ? `deleted ${shown}` : `nothing to delete at ${shown}${target.kind === 'redis' ? '' : ' (temporary leftovers, if any, were removed)'}`)
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

/** Deletes the filter; returns whether there was one. */
async function remove(target: Target, options: DeleteOptions): Promise<boolean> {
  if (target.kind === 'file') {
    await clearFileDebris(target.path)
    if (!existsSync(target.path)) return false
    if (statSync(target.path).isDirectory()) throw folderNotFile(target.path)
    await rm(target.path)
    return true
  }
  if (target.kind === 'level') {
    await clearLevelDebris(target.folder)
    if (!existsSync(target.folder)) return false
    await checkLevelFolder(target.folder)
    await rm(target.folder, { recursive: true, force: true })
    return true
  }
  const name = requireName(options.name)
  const client = await connectRedis(target, options)
  try {
    const { RedisBloomFilter } = await redisBackend()
    return await RedisBloomFilter.destroy(client, name, { timeout: options.timeout })
  } finally {
    await closeRedis(client)
  }
}

/**
 * Refuses to delete a folder that is not a LevelDB folder (a typo must not remove a home folder)
 * or that another process has open. A LevelDB folder that does not open as a filter (a
 * half-imported one) may be deleted: that is how it is cleared.
 */
async function checkLevelFolder(folder: string): Promise<void> {
  if (!statSync(folder).isDirectory() || !existsSync(join(folder, 'CURRENT'))) {
    throw new CliError('CLI_TARGET', `level:${folder} is not a LevelDB folder; not deleting it`)
  }
  const { LevelBloomFilter } = await levelBackend()
  try {
    await (await LevelBloomFilter.open(folder)).close()
  } catch (error) {
    if (error instanceof BloomError && error.code === 'BLOOM_LOCKED') throw error
  }
}
