import { CliError } from './errors.js'

let interrupted: NodeJS.Signals | undefined

/** Turns SIGINT/SIGTERM into an error thrown at the next {@link checkInterrupted}, so the normal failure path cleans up. */
export function watchSignals(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    // A second signal means "now": exit without cleaning up.
    if (interrupted !== undefined) process.exit(130)
    interrupted = signal
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
}

/** Whether a signal arrived. */
export function interruptedBy(): NodeJS.Signals | undefined {
  return interrupted
}

/** Throws once SIGINT or SIGTERM arrived. */
export function checkInterrupted(): void {
  if (interrupted !== undefined) throw new CliError('CLI_INPUT', `interrupted by ${interrupted}; the target is left as it was`)
}
