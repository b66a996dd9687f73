import { BloomError } from '@bloomkit/core'

/** Exit codes, as documented in the README ("Exit codes"). */
export const EXIT = {
  /** Done; for `check`, every key is present. */
  ok: 0,
  /** `check` only: at least one key is absent. */
  absent: 1,
  /** Any error: bad arguments or input, a target that cannot be read or written, a store that failed. */
  error: 2,
  /** Interrupted (SIGINT / SIGTERM); the target is left as it was. */
  interrupted: 130,
} as const

/** Codes the command line adds to core's `BLOOM_*` codes. */
export type CliErrorCode =
  /** An argument or flag is missing, unknown or out of range. */
  | 'CLI_USAGE'
  /** The input cannot be read, or a record in it is malformed. */
  | 'CLI_INPUT'
  /** The target exists and `--replace` was not given, or cannot be written. */
  | 'CLI_TARGET'
  /**
   * The input did not arrive whole, so nothing was committed: fewer keys than `--expect` or
   * `--min-keys`, no `--end-marker`, no key at all without `--allow-empty`, or far fewer keys than
   * the filter being replaced holds.
   */
  | 'CLI_INCOMPLETE'
  /** SIGINT or SIGTERM arrived before the commit: nothing was committed (exit 130). */
  | 'CLI_INTERRUPTED'

/** An error the command line reports as `bloomkit: <message> [<code>]`, exiting with {@link EXIT}.error. */
export class CliError extends Error {
  readonly code: CliErrorCode

  constructor(code: CliErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'CliError'
    this.code = code
  }
}

/** The code printed beside an error: the CLI's or core's code, the system's (`ENOENT`), or `ERROR`. */
export function codeOf(error: unknown): string {
  if (error instanceof CliError || error instanceof BloomError) return error.code
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' ? code : 'ERROR'
}

/** The message and the causes under it, one line: "cannot open x: connect ECONNREFUSED 127.0.0.1:1". */
export function describeError(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; current !== undefined && depth < 4; depth++) {
    const message = current instanceof Error ? current.message : String(current)
    if (message !== '' && !parts.some((part) => part.includes(message))) parts.push(message)
    current = current instanceof Error ? current.cause : undefined
  }
  return parts.join(': ')
}
