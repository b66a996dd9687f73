import { estimateErrorRate, sizeFilter } from '@bloomkit/core'
import { describe, expect, test } from 'vitest'
import { runCli } from './support/run-cli.js'

describe('bloomkit size', () => {
  test('prints both layouts with the sizes core computes, default marked', async () => {
    const result = await runCli(['size', '--capacity', '1000000', '--error-rate', '0.01'])
    expect(result.code).toBe(0)
    const blocked = sizeFilter({ capacity: 1_000_000, errorRate: 0.01, layout: 'blocked' })
    const classic = sizeFilter({ capacity: 1_000_000, errorRate: 0.01, layout: 'classic' })
    expect(result.stdout).toContain(`blocked (default)  ${blocked.bits.toLocaleString('en-US')}`)
    expect(result.stdout).toMatch(new RegExp(`classic +${classic.bits.toLocaleString('en-US')} .* ${classic.hashes} +1 `))
  })

  test('shows the expected false-positive rate at capacity of each layout’s parameters, at most the rate asked even for one key', async () => {
    const result = await runCli(['size', '--capacity', '1', '--error-rate', '1e-9', '--json'])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout)
    for (const row of report.layouts) {
      expect(row.expectedErrorRate).toBe(estimateErrorRate({ ...row.parameters, items: 1 }))
      expect(row.expectedErrorRate).toBeLessThanOrEqual(1e-9)
    }
    const text = await runCli(['size', '--capacity', '1000000', '--error-rate', '0.01'])
    expect(text.stdout).toMatch(/ expected rate /)
    const blocked = sizeFilter({ capacity: 1_000_000, errorRate: 0.01, layout: 'blocked' })
    expect(text.stdout).toContain(` ${estimateErrorRate({ ...blocked, items: 1_000_000 }).toPrecision(3)} `)
  })

  test('--json gives the parameters and the Redis sharding (4 MiB shards, one key more for the meta)', async () => {
    const result = await runCli(['size', '--capacity', '100_000_000', '--error-rate', '1%', '--json'])
    expect(result.code).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report.capacity).toBe(100_000_000)
    expect(report.errorRate).toBe(0.01)
    const blocked = report.layouts.find((row: { layout: string }) => row.layout === 'blocked')
    const { seed: _seed, ...sized } = sizeFilter({ capacity: 100_000_000, errorRate: 0.01, layout: 'blocked' })
    expect(blocked.parameters).toEqual(sized)
    // No seed: sizing does not choose one (a new filter gets a random secret one); "seed": 0 read as the filter's (issue 37 item 2).
    for (const row of report.layouts) expect([Object.keys(row.parameters), Object.keys(row.redis.parameters)].flat()).not.toContain('seed')
    expect(blocked.redis.parameters.shards).toBeGreaterThan(20)
    expect(blocked.redis.parameters.bits / blocked.redis.parameters.shards / 8).toBeLessThanOrEqual(4 << 20)
    expect(blocked.redis.keys).toBe(blocked.redis.parameters.shards + 1)
  })

  test.each([
    [['--capacity', '0', '--error-rate', '0.01'], /--capacity <keys>' argument '0' is invalid\. expected an integer from 1/],
    [['--capacity', '10', '--error-rate', '1.5'], /--error-rate <p>' argument '1\.5' is invalid\. expected a number greater than 0 and less than 1/],
    [['--capacity', '10'], /^bloomkit: size needs --error-rate <p> \[CLI_USAGE\]\n$/],
    [['--capacity', '10', '--error-rate', '0.1', '--bogus'], /^bloomkit: unknown option '--bogus'; see bloomkit size --help \[CLI_USAGE\]\n$/],
    // Mistyped, the flag is named as typed, not reported as missing.
    [['--capcity', '10', '--error-rate', '0.1'], /^bloomkit: unknown option '--capcity' \(Did you mean --capacity\?\); see bloomkit size --help \[CLI_USAGE\]\n$/],
  ])('bad arguments %j name the flag and exit with 2', async (args, message) => {
    const result = await runCli(['size', ...args])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
    expect(result.stdout).toBe('')
  })

  test('every command has --help with examples', async () => {
    for (const command of ['size', 'build', 'inspect', 'check', 'copy', 'delete']) {
      const result = await runCli([command, '--help'])
      expect(result.code, command).toBe(0)
      expect(result.stdout, command).toContain('Examples:')
      expect(result.stdout, command).toContain(`$ bloomkit ${command}`)
    }
    const top = await runCli(['--help'])
    expect(top.stdout).toContain('Exit codes:')
  })
})
