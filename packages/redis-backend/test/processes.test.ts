import { execFile, spawn } from 'node:child_process'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, inject, test } from 'vitest'
import { RedisBloomFilter } from '@bloomkit/redis-backend'
import { standaloneClient, uniqueName } from './support/clients.js'

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL('..', import.meta.url))
const redis = standaloneClient()

beforeAll(async () => {
  // The worker processes run the built package and launcher; build them (a no-op when dist is current).
  await run('npx', ['tsc', '-b', '.', '../../test-support'], { cwd: packageDir })
}, 120_000)
afterAll(async () => {
  await redis.quit()
})

test('four client processes adding at once lose nothing', async () => {
  const name = uniqueName('processes')
  const perWorker = 25_000
  const filter = await RedisBloomFilter.create(redis, name, { capacity: 100_000, errorRate: 0.01, shards: 3 })
  const { port } = inject('redisStandalone')
  await Promise.all(
    Array.from({ length: 4 }, (_, worker) => run('node', ['test/support/add-worker.mjs', String(port), name, String(worker), String(perWorker)], { cwd: packageDir })),
  )
  for (let worker = 0; worker < 4; worker++) {
    const keys = Array.from({ length: perWorker }, (_, i) => `w${worker}:${i}`)
    expect((await filter.hasMany(keys)).every(Boolean)).toBe(true)
  }
  const estimate = await filter.estimateCount()
  expect(Math.abs(estimate - 4 * perWorker)).toBeLessThan(2000)
  await filter.destroy()
}, 120_000)

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

test('a test runner killed with SIGKILL leaves no redis-server behind', async () => {
  // Runs the built launcher (built in beforeAll), as a test runner process would.
  const script = `import { startRedisServer } from '../../test-support/dist/redis-servers.js'
const server = await startRedisServer()
console.log('port', server.port)
setInterval(() => {}, 1000)`
  const child = spawn('node', ['--input-type=module', '-e', script], { cwd: packageDir, stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (data: Buffer) => {
      const match = /port (\d+)/.exec(data.toString())
      if (match) resolve(Number(match[1]))
    })
    child.once('exit', () => reject(new Error('launcher exited early')))
  })
  expect(await accepts(port)).toBe(true)
  child.kill('SIGKILL')
  let up = true
  for (let i = 0; i < 100 && up; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    up = await accepts(port)
  }
  expect(up).toBe(false)
}, 30_000)
