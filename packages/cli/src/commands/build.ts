import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { BloomError, type BitLayout, type FilterParameters } from '@bloomkit/core'
import { sameParameters } from '@bloomkit/core/store'
import type { CountingLevelFilter, LevelBloomFilter } from '@bloomkit/level-backend'
import { Command, Option } from 'commander'
import { levelBackend } from '../backends.js'
import { buildSnapshot, planShardGroups, type Counting, type PassRunner } from '../bulk-build.js'
import { clearDebris } from '../debris.js'
import { CliError } from '../errors.js'
import { byteSize, integer, keyCount, maxKeyLengthOption, probability } from '../flags.js'
import { inputSize, readKeys, type InputCounts, type InputFormat, type InputOptions, type KeyBlock } from '../input.js'
import { BuildProgress, formatBytes, progressWanted } from '../progress.js'
import { checkInterrupted } from '../signals.js'
import { parametersFromFlags, shownParameters } from '../sizing.js'
import { consuming, requireName, storedFilter, storedOf, writeLevel, writeSnapshotFile, type StoredFilter } from '../stores.js'
import { importIntoRedis, RedisBuildTarget } from '../redis-writes.js'
import { liveWriters, parseTarget, redact, refuseRedisFlags, type Target } from '../targets.js'
import type { Cluster, Redis } from 'ioredis'
import { checkWholeInput, thenCheck } from '../whole-input.js'

interface BuildOptions {
  out?: string
  name?: string
  capacity?: number
  errorRate?: number
  bits?: number
  hashes?: number
  shards?: number
  seed?: number
  layout?: BitLayout
  counting?: boolean
  format: InputFormat
  column?: string
  header?: boolean
  replace?: boolean
  force?: boolean
  memory: number
  ttl?: number
  timeout: number
  progress?: boolean
  quiet?: boolean
  json?: boolean
  showSeed?: boolean
  expect?: number
  minKeys?: number
  endMarker?: string
  allowShrink?: boolean
  allowEmpty?: boolean
  maxKeyLength: number
}

/** Default `--memory`: a quarter of this machine's RAM. */
const DEFAULT_MEMORY = Math.floor(totalmem() / 4)

export const buildCommand = new Command('build')
  .summary('load keys from a file or standard input into a new filter')
  .description(
    `Reads keys (one per line, a CSV column or a JSON-lines field; .gz files are decompressed) and builds a filter at --out: a snapshot file, level:<folder> or redis://… with --name.

Keys are hashed here and whole shards are written, as a snapshot import does, so loading into Redis runs at about the speed of writing a file. A filter larger than --memory is built in passes over groups of shards, re-reading the input file each pass. If anything fails, the target is left as it was. --replace swaps a new filter in atomically (on Redis through the rebuild, which keeps adds made by other clients meanwhile; with other sizing, a new filter staged beside the old one and switched in whole).`,
  )
  .argument('<input>', 'file of keys, or - for standard input')
  .option('-o, --out <target>', '(required) where to build the filter: file.blmk, level:<folder>, redis://host:port[/db], redis+cluster://host:port')
  .option('--name <filter>', 'the filter\'s name (Redis targets)')
  .option('--capacity <keys>', 'keys the filter must hold (with --error-rate): 2000000, 2e6 or 2M', keyCount(1, Number.MAX_SAFE_INTEGER))
  .option('--error-rate <p>', 'false-positive rate at capacity: 0.01, 1e-3 or 1%', probability)
  .option('--bits <bits>', 'explicit size in bits (with --hashes), instead of --capacity/--error-rate', integer(8, Number.MAX_SAFE_INTEGER))
  .option('--hashes <k>', 'bit positions per key (with --bits)', integer(1, 64))
  .option('--shards <count>', 'shards (default: fewest; 4 MiB each on Redis)', integer(1, 65_536))
  .option('--seed <seed>', 'hash seed, an unsigned 32-bit integer (default: a random secret one; with --replace, the replaced filter\'s)', integer(0, 0xffffffff))
  .addOption(new Option('--layout <layout>', 'bit layout (default: blocked where it costs ≤ 10 % more bits)').choices(['blocked', 'classic']))
  .option('--counting', 'build a counting filter (4-bit counters: 4× the memory and storage), whose keys `bloomkit remove` can take out again')
  .addOption(new Option('--format <format>', 'how keys are laid out').choices(['lines', 'csv', 'jsonl']).default('lines'))
  .option('--column <column>', 'csv: column number (from 1) or header name; jsonl: field name (default: the line is a JSON string, or its "key" field)')
  .option('--header', 'csv: the first row is a header (implied by a --column name)')
  .option('--replace', 'replace an existing filter at the target (atomically)')
  .option('--force', 'Redis --replace: take the lock of a rebuild whose bloomkit was killed (refused while another bloomkit builds this filter)')
  .option('--expect <keys>', 'commit only if the input holds exactly this many keys (blank lines not counted)', keyCount(0, Number.MAX_SAFE_INTEGER))
  .option('--min-keys <keys>', 'commit only if the input holds at least this many keys', keyCount(0, Number.MAX_SAFE_INTEGER))
  .option('--end-marker <line>', 'commit only if the input ends with this line (not a key), written by the producer once it succeeded')
  .option('--allow-shrink', 'with --replace: allow a filter built from under half the keys of the one it replaces')
  .option('--allow-empty', 'commit a filter even when the input held no key (without it an empty input commits nothing: exit 2, CLI_INCOMPLETE)')
  .addOption(maxKeyLengthOption())
  .addOption(
    new Option('--memory <bytes>', 'memory for bits at once, as 512M or 4G; larger filters take several passes')
      .argParser(byteSize)
      .default(DEFAULT_MEMORY, `${formatBytes(DEFAULT_MEMORY)}, a quarter of RAM`),
  )
  .option('--ttl <seconds>', 'Redis: expire the filter after this many seconds', integer(1, 2 ** 31 - 1))
  .option('--timeout <ms>', 'Redis: milliseconds per command and connection', integer(1, 2 ** 31 - 1), 5000)
  .option('--progress', 'show the progress bar even when standard error is not a terminal')
  .option('-q, --quiet', 'no progress bar and no summary')
  .option('--json', 'print the summary as JSON on standard output')
  .option('--show-seed', 'with --json: include the hash seed (a secret: who knows it can craft keys that read present)')
  .addHelpText(
    'after',
    `
Examples:
  $ bloomkit build ids.txt --out ids.blmk --capacity 10000000 --error-rate 0.01
  $ bloomkit build users.csv.gz --format csv --column email --out level:./data/emails --capacity 5e6 --error-rate 1e-3
  $ bloomkit build events.jsonl --format jsonl --column id --out redis://localhost:6379 --name event-ids --capacity 1e8 --error-rate 0.01
  $ zcat ids.gz | bloomkit build - --out redis+cluster://10.0.0.1:7000 --name ids --capacity 1e9 --error-rate 0.001 --memory 8G
  $ bloomkit build ids.txt --out redis://localhost:6379 --name ids --replace   # nightly rebuild, same parameters
  $ bloomkit build ids.txt --out redis://localhost:6379 --name ids --replace --capacity 2e8 --error-rate 0.01   # resize: a new filter, switched in whole
  $ set -o pipefail; { psql -Atc 'select id from users' && echo '#END'; } | bloomkit build - --end-marker '#END' --out redis://localhost:6379 --name ids --replace`,
  )
  .action(async (input: string, options: BuildOptions, command: Command) => {
    await build(input, options, command)
  })

async function build(input: string, options: BuildOptions, command: Command): Promise<void> {
  if (options.out === undefined) throw new CliError('CLI_USAGE', 'build needs -o, --out <target>: where to build the filter')
  const target = parseTarget(options.out, '--out')
  refuseRedisFlags(command, target, { name: '--name', ttl: '--ttl', timeout: '--timeout', force: '--force' }, '--out')
  const name = target.kind === 'redis' ? requireName(options.name) : undefined
  const size = inputSize(input)
  const inputOptions: InputOptions = {
    path: input,
    format: options.format,
    column: options.column,
    header: options.header,
    endMarker: options.endMarker,
    maxKeyBytes: options.maxKeyLength,
  }
  // Before the old filter is read: a swap a kill cut short is put back first.
  await clearDebris(target)
  const redis = target.kind === 'redis' ? new RedisBuildTarget(target, name!, options.timeout) : undefined
  try {
    await buildInto(target, redis, input, inputOptions, size, options)
  } finally {
    await redis?.close()
  }
}

/** {@link build} once the target is known; `redis` for a Redis target. */
async function buildInto(target: Target, redis: RedisBuildTarget | undefined, input: string, inputOptions: InputOptions, size: number | undefined, options: BuildOptions): Promise<void> {
  const name = redis?.name
  const { parameters, replacedCount } = await chooseParameters(target, options, redis)
  const counting = options.counting === true
  const groups = planShardGroups(parameters, options.memory, { counting })
  const started = performance.now()
  // Keys typed at a terminal: say what is awaited (a silent wait looks like a hang), and draw no bar
  // unless asked, as its redraws would write over the keys being typed.
  const typing = input === '-' && process.stdin.isTTY === true
  if (typing) process.stderr.write('bloomkit build: reading keys from standard input, one per line; end with Ctrl-D (or give a file of keys instead of -)\n')
  const progress = await BuildProgress.start({ bar: progressWanted(options) && (!typing || options.progress === true), inputBytes: size, passes: input === '-' ? 1 : groups.length })
  const counts: InputCounts = { keys: 0, skipped: 0 }
  /** One pass over the input; the first pass's counts are the ones reported. */
  async function* blocks(pass: number): AsyncGenerator<KeyBlock> {
    progress.setPass(pass + 1)
    const passCounts: InputCounts = { keys: 0, skipped: 0 }
    for await (const block of readKeys(inputOptions, passCounts, (bytes) => progress.addBytes(bytes))) {
      checkInterrupted()
      yield block
      progress.setKeys(passCounts.keys)
    }
    if (pass === 0) Object.assign(counts, passCounts)
  }
  /** Run after the last key, before the commit: refuses an input that did not arrive whole. */
  const whole = () => checkWholeInput(counts, options, replacedCount)
  let spill: string | undefined
  try {
    // A counting filter has no rebuild: its replacement is imported whole and swapped in, as a new build's is.
    if (redis !== undefined && options.replace === true && !counting) {
      await rebuildRedis(redis, parameters, options, blocks, whole)
    } else {
      let source: AsyncIterable<Uint8Array>
      if (input === '-' && groups.length > 1) {
        // Standard input cannot be read twice: spill the keys into a LevelDB filter on disk, then stream its snapshot.
        spill = await mkdtemp(join(tmpdir(), 'bloomkit-spill-'))
        source = await spillThroughLevel(join(spill, 'filter'), parameters, blocks(0), { counting })
      } else {
        source = buildSnapshot(parameters, groups, fillFrom(blocks), { counting })
      }
      await write(target, redis, thenCheck(source, whole), options)
    }
  } finally {
    progress.stop()
    if (spill !== undefined) await rm(spill, { recursive: true, force: true })
  }
  const seconds = (performance.now() - started) / 1000
  const summary = {
    target: target.kind === 'redis' ? redact(target.text) : target.text,
    name,
    keys: counts.keys,
    skipped: counts.skipped,
    passes: input === '-' ? 1 : groups.length,
    seconds: Number(seconds.toFixed(3)),
    keysPerSecond: Math.round(counts.keys / seconds),
    parameters: shownParameters(parameters, { showSeed: options.showSeed === true }),
    ...(counting ? { counting: true, counterBits: 4 } : {}),
  }
  if (options.json === true) console.log(JSON.stringify(summary, null, 2))
  else if (options.quiet !== true) {
    console.error(
      `built ${counting ? 'counting filter ' : ''}${summary.target}${name === undefined ? '' : ` (${name})`}: ${counts.keys.toLocaleString('en-US')} keys` +
        `${counts.skipped > 0 ? ` (${counts.skipped} blank skipped)` : ''} in ${seconds.toFixed(1)} s, ` +
        `${summary.keysPerSecond.toLocaleString('en-US')} keys/s${summary.passes > 1 ? `, ${summary.passes} passes` : ''}`,
    )
  }
}

/**
 * The sizing flags' parameters; with `--replace` and no sizing flags, those of the filter being
 * replaced. With `--replace`, also the replaced filter's estimated key count (for the shrink check).
 */
async function chooseParameters(target: Target, options: BuildOptions, redis: RedisBuildTarget | undefined): Promise<{ parameters: FilterParameters; replacedCount?: number }> {
  const fromFlags = await parametersFromFlags(options, { redis: target.kind === 'redis' })
  // A replaced filter keeps its seed unless --seed names another (and a Redis rebuild needs it).
  let stored: StoredFilter | undefined
  if (options.replace === true) {
    try {
      const count = options.allowShrink !== true
      // A Redis filter is read on the build's own connection, and kept open for a rebuild in place.
      const opened = redis === undefined ? undefined : await redis.existing()
      stored = redis === undefined ? await storedFilter(target, { name: options.name, timeout: options.timeout }, { count }) : opened && (await storedOf(opened, { count }))
    } catch (error) {
      // With sizing flags the stored filter is read only for its seed and count: one that cannot
      // be read (a damaged file) is replaced whole, with a new seed.
      if (fromFlags === undefined) throw error
    }
  }
  const wanted = options.counting === true ? 'counting' : 'plain'
  if (stored !== undefined && stored.kind !== wanted) {
    throw new CliError(
      'CLI_USAGE',
      `${target.text} holds a ${stored.kind} filter; build --replace keeps a filter's kind: ${wanted === 'plain' ? 'add --counting' : 'leave out --counting'}, or delete it first (bloomkit delete)`,
    )
  }
  const replacedCount = stored?.estimatedCount
  if (fromFlags !== undefined) {
    return { parameters: stored !== undefined && options.seed === undefined ? { ...fromFlags, seed: stored.parameters.seed } : fromFlags, replacedCount }
  }
  if (stored !== undefined) return { parameters: stored.parameters, replacedCount }
  throw new CliError('CLI_USAGE', 'size the filter with --capacity and --error-rate (or --bits and --hashes); only --replace of an existing filter may leave them out')
}

async function write(target: Target, redis: RedisBuildTarget | undefined, source: AsyncIterable<Uint8Array>, options: BuildOptions): Promise<void> {
  const replace = options.replace === true
  const kind = options.counting === true ? 'counting' : 'plain'
  if (target.kind === 'file') return writeSnapshotFile(target.path, source, { replace })
  if (target.kind === 'level') return writeLevel(target.folder, source, { replace, kind })
  // A counting filter with other sizing is replaced in a new generation, as a plain one is (rebuildRedis).
  const { name, target: redisTarget } = redis!
  const client = await redis!.client()
  const existing = await redis!.existing()
  // The import replaces what this instance reads.
  await existing?.close()
  const write = { kind, existing: existing?.kind, replace, replaceParameters: replace, timeout: options.timeout, ttl: options.ttl } as const
  return withLockHint(name, importIntoRedis(client, redisTarget, name, source, write))
}

/** A pass runner for {@link buildSnapshot} that adds every block of a pass over the input. */
function fillFrom(blocks: (pass: number) => AsyncIterable<KeyBlock>): PassRunner {
  return async (builder, pass) => {
    for await (const block of blocks(pass)) builder.add(block)
  }
}

/**
 * `--replace` on Redis: with the same parameters, the library's rebuild, which fills
 * next-generation keys while readers use the old ones, copies other clients' adds into both, and
 * swaps each shard in with one RENAME; with other sizing or seed, an import that replaces the
 * parameters (adds made meanwhile by other clients are not kept, and their open instances must
 * open the filter again). Without a filter to replace, a plain build.
 */
async function rebuildRedis(
  redis: RedisBuildTarget,
  parameters: FilterParameters,
  options: BuildOptions,
  blocks: (pass: number) => AsyncIterable<KeyBlock>,
  whole: () => Promise<void>,
): Promise<void> {
  const { name, label } = redis
  const client = await redis.client()
  const force = options.force === true
  const existing = await redis.existing()
  if (force) await refuseLiveWriters(client, label, name)
  const rebuilding = existing?.plain
  if (rebuilding !== undefined && sameParameters(rebuilding.parameters, parameters)) {
    await withLockHint(name, consuming(thenCheck(keysOf(blocks(0)), whole), (keys) => rebuilding.rebuild(keys, { force })))
    return
  }
  // A filter with other parameters has other keys: the library stages the new one beside it and
  // switches to it in one step (RedisBloomFilter.import with replaceParameters, docs/SPEC.md 9.6).
  await existing?.close()
  const resize = existing !== undefined
  const source = thenCheck(buildSnapshot(parameters, planShardGroups(parameters, options.memory), fillFrom(blocks)), whole)
  const write = { kind: 'plain', existing: existing?.kind, replace: resize, replaceParameters: resize, force, timeout: options.timeout, ttl: options.ttl } as const
  await withLockHint(name, importIntoRedis(client, redis.target, name, source, write))
}

/** A lock held by a rebuild or import is reported with the command line's way out. */
async function withLockHint(name: string, work: Promise<void>): Promise<void> {
  try {
    await work
  } catch (error) {
    if (!(error instanceof BloomError && error.code === 'BLOOM_LOCKED')) throw error
    throw new BloomError(
      'BLOOM_LOCKED',
      `filter "${name}" is locked by another rebuild or import; if the bloomkit that held it was killed, pass --force (refused while another bloomkit works on this filter)`,
      { cause: error },
    )
  }
}

/**
 * `--force` takes a rebuild lock whatever holds it, so it must not take one from a live process:
 * every bloomkit connection that writes a filter is named for it (CLIENT SETNAME
 * bloomkit-build:<filter>), and the server drops the connections of a process that died. Another
 * such connection means a bloomkit is building this filter now.
 */
async function refuseLiveWriters(client: Redis | Cluster, label: string, name: string): Promise<void> {
  const live = await liveWriters(client, label)
  if (live.length > 0) {
    throw new BloomError('BLOOM_LOCKED', `--force refused: another bloomkit is building filter "${name}" now (connection from ${live.join(', ')}); wait for it or stop it`)
  }
}

/** The keys of the blocks one by one (views, not copies), for library calls that take an iterable. */
async function* keysOf(blocks: AsyncIterable<KeyBlock>): AsyncGenerator<Uint8Array | string> {
  for await (const block of blocks) {
    if (block.kind === 'list') yield* block.keys
    else for (let i = 0; i < block.count; i++) yield block.data.subarray(block.starts[i], block.ends[i])
  }
}

/** Keys added per `addMany` call while spilling. */
const SPILL_BATCH = 16_384

/**
 * Standard input larger than --memory: the keys go into a LevelDB filter in a temporary folder
 * (created empty with the exact parameters by importing an all-zero snapshot), whose snapshot is
 * then streamed to the target.
 */
async function spillThroughLevel(folder: string, parameters: FilterParameters, blocks: AsyncIterable<KeyBlock>, { counting = false }: Counting): Promise<AsyncIterable<Uint8Array>> {
  const empty = buildSnapshot(parameters, planShardGroups(parameters, 64 << 20, { counting }), async () => {}, { counting })
  const { CountingLevelFilter, LevelBloomFilter } = await levelBackend()
  const filter: LevelBloomFilter | CountingLevelFilter = counting ? await CountingLevelFilter.import(folder, empty) : await LevelBloomFilter.import(folder, empty, { kind: 'fixed' })
  try {
    let batch: Array<Uint8Array | string> = []
    for await (const key of keysOf(blocks)) {
      batch.push(key)
      if (batch.length === SPILL_BATCH) {
        await filter.addMany(batch)
        batch = []
      }
    }
    await filter.addMany(batch)
  } catch (error) {
    await filter.close()
    throw error
  }
  return (async function* () {
    try {
      yield* filter.exportChunks()
    } finally {
      await filter.close()
    }
  })()
}
