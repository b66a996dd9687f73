import { CliError } from './errors.js'
import type { InputCounts } from './input.js'
import { settleSignals } from './signals.js'

/** The flags by which a build tells a whole input from one whose producer died. */
export interface WholeInputFlags {
  /** `--expect N`: exactly this many keys (blank lines and the end marker not counted). */
  readonly expect?: number
  /** `--min-keys N`: at least this many keys. */
  readonly minKeys?: number
  /** `--end-marker LINE`: the input must end with this line. */
  readonly endMarker?: string
  /** `--allow-shrink`: replace a filter even by one built from far fewer keys. */
  readonly allowShrink?: boolean
  /** `--allow-empty`: commit a filter built from an input that held no key. */
  readonly allowEmpty?: boolean
}

/**
 * A replaced filter's estimated key count above which a build from fewer than half as many keys is
 * refused without `--allow-shrink`. Below it, estimates of tiny filters are too rough to judge by.
 */
const SHRINK_FLOOR = 100

/**
 * Checks, after the last key was read and before anything is committed, that the input arrived
 * whole: no signal arrived (waiting briefly for one that came with the end of the input), the
 * counts meet `--expect`/`--min-keys`, the end marker was read, the input held a key unless
 * `--allow-empty` (an empty filter answers "absent" for every key: a producer that failed before
 * its first line, `false | bloomkit build -`, must not become one), and a replaced filter holding
 * `replacedCount` keys (estimated) is not replaced by one from under half as many.
 * @throws CliError `CLI_INTERRUPTED`, or `CLI_INCOMPLETE` naming the flag that failed.
 */
export async function checkWholeInput(counts: InputCounts, flags: WholeInputFlags, replacedCount: number | undefined): Promise<void> {
  await settleSignals()
  const keys = counts.keys.toLocaleString('en-US')
  if (flags.endMarker !== undefined && counts.endMarker !== true) {
    throw new CliError('CLI_INCOMPLETE', `the input ended after ${keys} keys without the --end-marker line; the producer may have died, nothing was committed`)
  }
  if (flags.expect !== undefined && counts.keys !== flags.expect) {
    throw new CliError('CLI_INCOMPLETE', `the input held ${keys} keys, --expect ${flags.expect.toLocaleString('en-US')}; nothing was committed`)
  }
  if (flags.minKeys !== undefined && counts.keys < flags.minKeys) {
    throw new CliError('CLI_INCOMPLETE', `the input held ${keys} keys, fewer than --min-keys ${flags.minKeys.toLocaleString('en-US')}; nothing was committed`)
  }
  if (counts.keys === 0 && flags.allowEmpty !== true) {
    const blank = counts.skipped > 0 ? ` (${counts.skipped.toLocaleString('en-US')} blank lines or empty values skipped)` : ''
    throw new CliError(
      'CLI_INCOMPLETE',
      `the input held no keys${blank}; if the producer failed, nothing was committed; pass --allow-empty if the filter is meant to be empty`,
    )
  }
  if (flags.allowShrink !== true && replacedCount !== undefined && replacedCount >= SHRINK_FLOOR && counts.keys < replacedCount / 2) {
    throw new CliError(
      'CLI_INCOMPLETE',
      `the input held ${keys} keys, under half of the about ${Math.round(replacedCount).toLocaleString('en-US')} in the filter it would replace; ` +
        'if the producer died, nothing was committed; pass --allow-shrink if the filter is meant to shrink',
    )
  }
}

/** Passes `source` on, then runs `check` before reporting its end: a consumer commits only after `check` passed. */
export async function* thenCheck<T>(source: AsyncIterable<T>, check: () => Promise<void>): AsyncGenerator<T> {
  yield* source
  await check()
}
