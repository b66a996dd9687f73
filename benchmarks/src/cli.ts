import { spawn } from 'node:child_process'
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { Redis } from 'ioredis'
import { startRedisServer } from '../../test-support/dist/redis-servers.js'
import { median, type SuiteOptions } from './measure.js'
import type { Report } from './report.js'

/** The bloomkit binary, run as users run it (a fresh process per build). */
const BIN = fileURLToPath(new URL('../../packages/cli/dist/main.js', import.meta.url))
/** Keys in the input file and rounds; a quick run (`--quick`) takes 1M keys and one round. */
let KEYS = 10_000_000
/** Sized for 100M keys: sparse at 10M, so the per-bit BITFIELD path is what addMany takes. */
const CAPACITY = 100_000_000
const ERROR_RATE = 0.01
let ROUNDS = 3
/** Keys of the addMany baseline per round: a prefix of the same keys (its rate hardly depends on the fill). */
const ADD_MANY_KEYS = 500_000

async function writeKeys(path: string, count: number): Promise<void> {
  const out = createWriteStream(path)
  const step = 100_000
  for (let from = 0; from < count; from += step) {
    let text = ''
    for (let i = from; i < Math.min(count, from + step); i++) text += `user:${i}\n`
    if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())))
}

/** Runs `bloomkit <args>`; resolves to its wall time in seconds (process start to exit). */
function timeCli(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`bloomkit ${args.join(' ')} exited with ${code}: ${stderr}${stdout}`))
      else resolve((performance.now() - started) / 1000)
    })
  })
}

/** Seconds of CPU the Redis server has used (user + system). */
async function serverCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0)
  return field('used_cpu_user') + field('used_cpu_sys')
}

/**
 * Issue 12's targets, in paired rounds: `bloomkit build` of a 10M-line file into Redis against the
 * same build into a snapshot file (same parameters: the Redis default of 4 MiB shards) and against
 * `addMany` of the same keys into the same Redis filter.
 */
export async function runCliBenchmarks(report: Report, { quick }: SuiteOptions): Promise<void> {
  if (quick) [KEYS, ROUNDS] = [1_000_000, 1]
  const folder = mkdtempSync(join(tmpdir(), 'bloomkit-bench-cli-'))
  const server = await startRedisServer()
  const redis = new Redis({ host: server.host, port: server.port, maxRetriesPerRequest: 1, connectTimeout: 2000 })
  try {
    const input = join(folder, 'keys.txt')
    await writeKeys(input, KEYS)
    const probe = await RedisBloomFilter.create(redis, 'probe', { capacity: CAPACITY, errorRate: ERROR_RATE })
    const parameters = probe.parameters
    await probe.destroy()
    const sizing = ['--capacity', String(CAPACITY), '--error-rate', String(ERROR_RATE)]
    const url = `redis://${server.host}:${server.port}`
    const keys: string[] = []
    for (let i = 0; i < ADD_MANY_KEYS; i++) keys.push(`user:${i}`)
    const fileRates: number[] = []
    const redisRates: number[] = []
    const replaceRates: number[] = []
    const addManyRates: number[] = []
    const serverCpuPerKey: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      report.progress(round, ROUNDS, `round ${round + 1} of ${ROUNDS}`)
      const file = join(folder, 'out.blmk')
      fileRates.push(KEYS / (await timeCli(['build', input, '--out', file, ...sizing, '--shards', String(parameters.shards), '--replace', '--quiet'])))
      const cpuBefore = await serverCpu(redis)
      redisRates.push(KEYS / (await timeCli(['build', input, '--out', url, '--name', `cli-bench-${round}`, ...sizing, '--quiet'])))
      serverCpuPerKey.push(((await serverCpu(redis)) - cpuBefore) / KEYS)
      // The nightly reload: the same keys again with --replace, through RedisBloomFilter.rebuild.
      replaceRates.push(KEYS / (await timeCli(['build', input, '--out', url, '--name', `cli-bench-${round}`, '--replace', '--quiet'])))
      await RedisBloomFilter.destroy(redis, `cli-bench-${round}`)
      const filter = await RedisBloomFilter.create(redis, `cli-bench-add-${round}`, { capacity: CAPACITY, errorRate: ERROR_RATE })
      const started = performance.now()
      await filter.addMany(keys)
      addManyRates.push(ADD_MANY_KEYS / ((performance.now() - started) / 1000))
      await filter.destroy()
    }
    const toFile = median(fileRates)
    const toRedis = median(redisRates)
    const replace = median(replaceRates)
    const addMany = median(addManyRates)
    // Ratios within each round (same minute, same machine state), then their median.
    const paired = (ours: number[], theirs: number[]) => `${median(ours.map((rate, i) => rate / theirs[i])).toFixed(2)}×`
    const task = `build ${KEYS / 1e6}M keys from a file (filter for 100M at 1 %, ${parameters.shards} × 4 MiB shards)`
    report.add({ suite: 'cli', task, subject: 'bloomkit build → snapshot file', batch: KEYS, opsPerSecond: toFile, notes: `${ROUNDS} paired rounds, wall time of the process` })
    report.add({
      suite: 'cli',
      task,
      subject: 'bloomkit build → Redis (whole shards)',
      batch: KEYS,
      opsPerSecond: toRedis,
      notes: `${paired(redisRates, fileRates)} the file build (target ≥ 0.7×); ${paired(redisRates, addManyRates)} addMany (target ≥ 5×); Redis server CPU ${(median(serverCpuPerKey) * 1e9).toFixed(0)} ns/key`,
    })
    report.add({
      suite: 'cli',
      task,
      subject: 'bloomkit build --replace → Redis (rebuild swap)',
      batch: KEYS,
      opsPerSecond: replace,
      notes: `${paired(replaceRates, fileRates)} the file build; ${paired(replaceRates, addManyRates)} addMany`,
    })
    report.add({
      suite: 'cli',
      task,
      subject: 'RedisBloomFilter.addMany (per-bit BITFIELD)',
      batch: ADD_MANY_KEYS,
      opsPerSecond: addMany,
      notes: `one addMany of the first ${ADD_MANY_KEYS / 1e6}M of the same keys into the same filter, per round`,
    })
  } finally {
    redis.disconnect()
    await server.stop()
    rmSync(folder, { recursive: true, force: true })
  }
}
