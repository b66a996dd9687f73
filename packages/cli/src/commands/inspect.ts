import { estimateErrorRate } from '@bloomkit/core'
import { shardBitsOf } from '@bloomkit/core/store'
import { Command } from 'commander'
import { integer } from '../flags.js'
import { fillStats } from '../filter-stats.js'
import { formatBytes } from '../progress.js'
import { shownParameters } from '../sizing.js'
import { openFilter } from '../stores.js'
import { parseTarget, redact, refuseRedisFlags } from '../targets.js'

export const inspectCommand = new Command('inspect')
  .summary('show a filter\'s parameters, fill, estimated count and current error rate')
  .description('Reads a filter (a snapshot file is checked against its CRCs) and reports its parameters, size, set bits per shard, estimated key count and error rate now; for a counting filter also its counter width and saturated counters; for Redis also its TTL, state and keys.')
  .argument('<target>', 'file.blmk, level:<folder>, redis://host:port[/db] or redis+cluster://host:port')
  .option('--name <filter>', 'the filter\'s name (Redis targets)')
  .option('--timeout <ms>', 'Redis: milliseconds per command and connection', integer(1, 2 ** 31 - 1), 5000)
  .option('--show-seed', 'also show the hash seed (a secret: who knows it can craft keys that read present)')
  .option('--json', 'print JSON')
  .addHelpText(
    'after',
    `
Examples:
  $ bloomkit inspect ids.blmk
  $ bloomkit inspect level:./data/emails --json
  $ bloomkit inspect redis://localhost:6379 --name user-ids
  $ bloomkit inspect redis+cluster://10.0.0.1:7000 --name ids --json | jq .errorRate`,
  )
  .action(async (text: string, options: { name?: string; timeout: number; json?: boolean; showSeed?: boolean }, command: Command) => {
    const target = parseTarget(text, '<target>')
    refuseRedisFlags(command, target, { name: '--name', timeout: '--timeout' }, '<target>')
    const opened = await openFilter(target, options)
    try {
      const { parameters } = opened.filter
      const setBits = await opened.setBits()
      const stats = fillStats(parameters, setBits)
      const sorted = [...setBits].sort((a, b) => a - b)
      const shardBits = shardBitsOf(parameters)
      // A counting filter: 4 bits per position, and its "set bits" are its non-zero counters.
      const counting = opened.counting === undefined ? undefined : await opened.counting.describeCounters()
      const bytesPerBit = counting === undefined ? 1 / 8 : 1 / 2
      const report = {
        target: target.kind === 'redis' ? redact(target.text) : target.text,
        kind: target.kind,
        name: target.kind === 'redis' ? options.name : undefined,
        parameters: shownParameters(parameters, { showSeed: options.showSeed === true }),
        filter: counting === undefined ? 'plain' : 'counting',
        ...(counting === undefined ? {} : { counterBits: 4, saturatedCounters: counting.saturated }),
        bytes: parameters.bits * bytesPerBit,
        shardBytes: shardBits * bytesPerBit,
        setBits: {
          total: setBits.reduce((sum, n) => sum + n, 0),
          min: sorted[0],
          median: sorted[Math.floor((sorted.length - 1) / 2)],
          max: sorted[sorted.length - 1],
        },
        fill: setBits.reduce((sum, n) => sum + n, 0) / parameters.bits,
        estimatedCount: stats.estimatedCount,
        errorRate: stats.errorRate,
        // What the sizing model expects at that many keys for these parameters, beside the rate the set bits give now.
        expectedErrorRate: estimateErrorRate({ ...parameters, items: stats.estimatedCount }),
        ...(opened.redis === undefined
          ? {}
          : { ttl: await opened.redis.ttl(), state: await opened.redis.state(), keys: opened.redis.keys() }),
      }
      if (options.json === true) {
        console.log(JSON.stringify(report, null, 2))
        return
      }
      const number = (n: number) => n.toLocaleString('en-US')
      const lines: [string, string][] = [
        ['target', `${report.target}${report.name === undefined ? '' : ` (filter "${report.name}")`}`],
        ['layout', parameters.layout],
        ...(counting === undefined ? [] : [['filter', 'counting: 4-bit counters (keys can be removed)'] as [string, string]]),
        [
          counting === undefined ? 'bits' : 'counters',
          `${number(parameters.bits)} (${formatBytes(report.bytes)}) in ${number(parameters.shards)} shard(s) of ${formatBytes(report.shardBytes)}`,
        ],
        ['hashes', String(parameters.hashes)],
        ...(options.showSeed === true ? [['seed', String(parameters.seed)] as [string, string]] : []),
        [counting === undefined ? 'set bits' : 'non-zero', `${number(report.setBits.total)} (${(report.fill * 100).toFixed(2)} % full); per shard min ${number(report.setBits.min)}, median ${number(report.setBits.median)}, max ${number(report.setBits.max)}`],
        ...(counting === undefined
          ? []
          : [['saturated', `${number(counting.saturated)} counter(s) at 15${counting.saturated > 0 ? ' (they never go down again: keys on them alone cannot be removed)' : ''}`] as [string, string]]),
        ['estimated', `${number(report.estimatedCount)} keys`],
        ['error rate', `${report.errorRate.toPrecision(3)} now; ${report.expectedErrorRate.toPrecision(3)} expected at ${number(report.estimatedCount)} keys`],
      ]
      if (report.keys !== undefined) {
        lines.push(['ttl', report.ttl === null || report.ttl === undefined ? 'none' : `${report.ttl.toFixed(1)} s`])
        lines.push(['state', String(report.state)])
        const keys = report.keys
        lines.push(['keys', keys.length <= 4 ? keys.join(', ') : `${keys[0]}, ${keys[1]} … ${keys[keys.length - 1]} (${keys.length}; --json lists all)`])
      }
      for (const [label, value] of lines) console.log(`${label.padEnd(11)}${value}`)
    } finally {
      await opened.close()
    }
  })
