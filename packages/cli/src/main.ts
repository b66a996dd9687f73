#!/usr/bin/env node
import { run } from './program.js'

// Output piped into a reader that stopped early (`bloomkit check … | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

process.exitCode = await run(process.argv)
// Nothing may keep the process alive after the command (a stray socket, a progress timer).
setTimeout(() => process.exit(), 200).unref()
