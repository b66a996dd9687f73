import { CliError } from './errors.js'

let interrupted: NodeJS.Signals | undefined
const listeners = new Set<(signal: NodeJS.Signals) => void>()

/**
 * Turns SIGINT/SIGTERM into an error thrown at the next {@link checkInterrupted}, so the normal
 * failure path cleans up, and tells {@link onInterrupt} listeners (an input waiting on a silent
 * producer stops waiting).
 */
export function watchSignals(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    // A second signal means "now": exit without cleaning up (the next run clears what is left).
    if (interrupted !== undefined) process.exit(130)
    interrupted = signal
    for (const listener of listeners) listener(signal)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
}

/** Whether a signal arrived. */
export function interruptedBy(): NodeJS.Signals | undefined {
  return interrupted
}

/** Calls `listener` when SIGINT or SIGTERM arrives; returns a function that removes it. */
export function onInterrupt(listener: (signal: NodeJS.Signals) => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** The error a build fails with once interrupted (exit 130 in `run`). */
export function interruptedError(signal: NodeJS.Signals): CliError {
  return new CliError('CLI_INTERRUPTED', `interrupted by ${signal}; the target is left as it was`)
}

/** Throws once SIGINT or SIGTERM arrived. */
export function checkInterrupted(): void {
  if (interrupted !== undefined) throw interruptedError(interrupted)
}

/**
 * How long a build waits, once its input ended, for a signal that may have ended it: Ctrl-C
 * reaches the producer and bloomkit together, and the producer's death (end of input) can be
 * seen before bloomkit's own SIGINT is handled.
 */
const SETTLE_MS = 100

/**
 * Waits for signals already sent to be handled, then throws if one arrived: called between the
 * end of the input and the commit, so that an interrupted input is never taken for a whole one.
 */
export async function settleSignals(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS))
  checkInterrupted()
}
