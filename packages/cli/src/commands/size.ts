import { estimateErrorRate, sizeFilter, type BitLayout, type FilterParameters } from '@bloomkit/core'
import { Command } from 'commander'
import { CliError } from '../errors.js'
import { integer, probability, keyCount } from '../flags.js'
import { redisBackend } from '../backends.js'
import { formatBytes } from '../progress.js'
import { counterBitsOf } from '../sizing.js'

interface SizeRow {
  readonly layout: BitLayout
  /**
   * Parameters for a file, a LevelDB folder or memory (fewest shards); without a seed, which sizing
   * does not choose (a new filter gets a random secret one, or build's --seed).
   */
  readonly parameters: Omit<FilterParameters, 'seed'>
  /** Bytes of bits (a counting filter: of 4-bit counters, 4× as many). */
  readonly bytes: number
  /** The expected false-positive rate at capacity for these parameters (core's `estimateErrorRate`); at most the rate asked. */
  readonly expectedErrorRate: number
  /** Parameters `RedisBloomFilter.create` (and `bloomkit build` into Redis) picks: shard strings of at most 4 MiB. */
  readonly redis: { readonly parameters: Omit<FilterParameters, 'seed'>; readonly keys: number }
}

export const sizeCommand = new Command('size')
  .summary('how many bits, bytes, hashes and shards a filter needs')
  .description('Sizes a filter for --capacity keys at --error-rate, for both bit layouts, without creating anything.')
  // Checked in the action, not by commander: a mistyped flag is then reported as typed, not as a missing one.
  .option('--capacity <keys>', '(required) keys the filter must hold: 2000000, 2e6 or 2M', keyCount(1, Number.MAX_SAFE_INTEGER))
  .option('--error-rate <p>', '(required) false-positive rate at capacity: 0.01, 1e-3 or 1%', probability)
  .option('--shards <count>', 'split the bits into this many shards (default: fewest; 4 MiB each on Redis)', integer(1, 65_536))
  .option('--counting', 'a counting filter (build --counting): 4-bit counters, 4× the bytes, and on Redis as many more shards')
  .option('--json', 'print JSON')
  .addHelpText(
    'after',
    `
Examples:
  $ bloomkit size --capacity 100000000 --error-rate 0.01
  $ bloomkit size --capacity 1e9 --error-rate 0.1% --json
  $ bloomkit size --capacity 5_000_000 --error-rate 0.001 --shards 16
  $ bloomkit size --capacity 4e6 --error-rate 0.01 --counting`,
  )
  .action(async (flags: { capacity?: number; errorRate?: number; shards?: number; counting?: boolean; json?: boolean }) => {
    if (flags.capacity === undefined) throw new CliError('CLI_USAGE', 'size needs --capacity <keys>')
    if (flags.errorRate === undefined) throw new CliError('CLI_USAGE', 'size needs --error-rate <p>')
    // The Redis columns follow the Redis backend's sizing rule, so this command loads it (not `size --help`).
    const { sizeRedisFilter } = await redisBackend()
    const options = { ...flags, capacity: flags.capacity, errorRate: flags.errorRate }
    // The library's own sizing for the kind: RedisCountingFilter.create sizes with the counter width too.
    const counterBits = counterBitsOf(options)
    const width = Math.max(1, counterBits)
    const rows: SizeRow[] = (['blocked', 'classic'] as const).map((layout) => {
      const sizing = { capacity: options.capacity, errorRate: options.errorRate, shards: options.shards, layout }
      const parameters = withoutSeed(sizeFilter(sizing))
      const redis = withoutSeed(sizeRedisFilter(sizing, counterBits))
      const expectedErrorRate = estimateErrorRate({ ...parameters, items: options.capacity })
      return { layout, parameters, bytes: (parameters.bits / 8) * width, expectedErrorRate, redis: { parameters: redis, keys: redis.shards + 1 } }
    })
    if (options.json === true) {
      const kind = counterBits === 0 ? {} : { counting: true, counterBits }
      console.log(JSON.stringify({ capacity: options.capacity, errorRate: options.errorRate, ...kind, layouts: rows }, null, 2))
      return
    }
    const defaultLayout = sizeFilter({ capacity: options.capacity, errorRate: options.errorRate }).layout
    const kind = counterBits === 0 ? '' : ` (counting filter: ${counterBits}-bit counters)`
    console.log(`${options.capacity.toLocaleString('en-US')} keys at an error rate of ${options.errorRate}${kind}:`)
    const table = [
      ['layout', 'bits', 'memory', 'hashes', 'shards', 'expected rate', 'Redis shards', 'Redis keys'],
      ...rows.map((row) => [
        row.layout + (row.layout === defaultLayout ? ' (default)' : ''),
        row.parameters.bits.toLocaleString('en-US'),
        formatBytes(row.bytes),
        String(row.parameters.hashes),
        String(row.parameters.shards),
        row.expectedErrorRate.toPrecision(3),
        `${row.redis.parameters.shards} × ${formatBytes((row.redis.parameters.bits / row.redis.parameters.shards / 8) * width)}`,
        String(row.redis.keys),
      ]),
    ]
    const widths = table[0].map((_, column) => Math.max(...table.map((line) => line[column].length)))
    for (const line of table) console.log(line.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd())
  })

/** Sizing's parameters but the seed it fills in (0), which a filter built from them would not have. */
function withoutSeed({ seed: _seed, ...parameters }: FilterParameters): Omit<FilterParameters, 'seed'> {
  return parameters
}
